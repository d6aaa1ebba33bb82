import Contracts
import Foundation
import PostgreSQL
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// Each Deployment's command line and environment, run as they are written against the built
/// executable: the service must start, listen on the Deployment's port by its own default,
/// and answer the kubelet's gRPC probe. The stateful services run on PostgreSQL, as the
/// Deployments have them: the Secret's URL is a fresh database of the test server.
@Suite("Kubernetes manifests, run")
struct ManifestLaunchLiveTests {
    @Test("each Deployment's command line starts its service on its port, answering the gRPC probe", arguments: StorefrontServices.names)
    func deploymentCommandLineRuns(name: String) async throws {
        guard let schema = StorefrontServices.schemas[name] else {
            try await Self.run(name, databaseURL: nil)
            return
        }
        // The manifests give these services no SQLite: a database for each run, whose schema
        // shows that the URL from the Secret is the one the service used.
        try await PostgreSQLServer.withDatabase { url in
            try await Self.run(name, databaseURL: url)
            let database = try PostgreSQLConnection(url: url)
            let found = try database.execute("SELECT schema_name FROM information_schema.schemata WHERE schema_name = $1", [schema])
            #expect(found.rows.count == 1, "\(name) made no schema \(schema) in the database SHOP_DATABASE_URL named")
        }
    }

    /// Runs the Deployment `name` as written, but for what cannot be literal here, with
    /// `databaseURL` as the Secret's `SHOP_DATABASE_URL`; stops it with SIGTERM.
    static func run(_ name: String, databaseURL: String?) async throws {
        let manifests = try await Manifests.load()
        let deployment = try #require(try manifests.deployments().first { $0.metadata.name == name }, "no Deployment \(name)")
        let container = try #require(deployment.containers.first)
        let executable = try #require(container.command?.first)
        let containerPort = try #require(container.ports?.first?.containerPort)

        // What may not be literal here: a private loopback address instead of 0.0.0.0 (so that
        // a developer's running system on 127.0.0.1 is not in the way), a scratch directory
        // for /data and for each Secret volume, and --port left out so that the port is the
        // executable's own default.
        let host = "127.\(Int.random(in: 1...254)).\(Int.random(in: 0...255)).\(Int.random(in: 1...254))"
        let scratch = try TestScratch.makeDirectory(prefix: "deploy-manifest-\(name)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var arguments: [String] = []
        var secretFiles: [String: URL] = [:]
        var index = 0
        let args = container.args ?? []
        while index < args.count {
            switch args[index] {
            case "--host": arguments += ["--host", host]; index += 2
            case "--data-dir": arguments += ["--data-dir", scratch.path]; index += 2
            case "--port": index += 2
            case let argument:
                if let (_, volume, key) = ManifestTests.secretFile(at: argument, in: deployment) {
                    let file = scratch.appendingPathComponent("secrets/\(volume.secretName)/\(key)")
                    try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                    secretFiles[key] = file
                    arguments.append(file.path)
                } else {
                    arguments.append(argument)
                }
                index += 1
            }
        }
        arguments += ["--grace-seconds", "2"]
        // The signing key, made as secret.yaml says, so that a key auth-svc did not write is
        // shown to be the one it signs with.
        let signingKeyID = TestScratch.randomKey()
        if let file = secretFiles["signing-key.json"] {
            try Self.signingKeyFile(kid: signingKeyID).write(to: file)
        }

        // The environment as the kubelet would set it: ConfigMap values, fresh secrets.
        let configMaps = try manifests.configMaps()
        var environment: [String: String] = [:]
        for variable in container.env ?? [] {
            if let value = variable.value {
                environment[variable.name] = value
            } else if let reference = variable.valueFrom?.configMapKeyRef {
                environment[variable.name] = try #require(configMaps.first { $0.metadata.name == reference.name }?.data?[reference.key])
            } else if variable.name == "SHOP_DATABASE_URL", let databaseURL {
                environment[variable.name] = databaseURL
            } else if variable.valueFrom?.secretKeyRef != nil {
                // Also PGPASSWORD, which the test server (trusting loopback) does not ask.
                environment[variable.name] = TestScratch.randomKey()
            }
        }

        let service = try await ServiceProcess.launch(executable, arguments: arguments, environment: environment)
        await service.closeClient()
        #expect(service.port == containerPort, "\(name) listens on \(service.port) by default; the Deployment says \(containerPort)")
        #expect(service.port == StorefrontServices.port(of: name), "\(name)'s default port is not DESIGN.md's")

        // The upstreams (`auth-svc-pods:7001`…) do not resolve here: the backends serve
        // regardless; the gateway answers NOT_SERVING until the auth and catalog services it
        // routes to do.
        let expected = name == "gateway" ? 2 : 1
        var outcome = KubeletProbe.Outcome.failed("not asked")
        let answered = await eventually(within: .seconds(20), every: .milliseconds(250)) {
            outcome = (try? await KubeletProbe.check(host: host, port: service.port)) ?? .failed("python3 did not run")
            return outcome == .status(expected)
        }
        #expect(answered, "\(name) answered the probe with \(outcome), not status \(expected)\n\(service.log.tail(20))")

        if secretFiles["signing-key.json"] != nil {
            let client = try RPCClient(target: SocketAddressText(host: host, port: service.port))
            let published = try? await client.unary(AuthContract.getJwks, Empty())
            await client.close()
            #expect(published?.keys.first?.kid == signingKeyID, "\(name) does not sign with the key --signing-key names")
        }

        let status = await service.stop(patience: .seconds(10))
        #expect(status == 0, "\(name) did not exit 0 on SIGTERM:\n\(service.log.tail(20))")
    }

    /// A signing key file as secret.yaml makes one: an EdDSA private key (32 random bytes,
    /// base64url without padding) under `kid`.
    static func signingKeyFile(kid: String) -> Data {
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max) }
        let privateKey = Data(bytes).base64EncodedString()
            .replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
        return Data(#"{"alg":"EdDSA","kid":"\#(kid)","privateKey":"\#(privateKey)"}"#.utf8)
    }
}
