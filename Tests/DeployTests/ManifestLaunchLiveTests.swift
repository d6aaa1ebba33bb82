import Foundation
import ServiceTestSupport
import Testing

/// Each Deployment's command line and environment, run as they are written against the built
/// executable: the service must start, listen on the Deployment's port by its own default,
/// and answer the kubelet's gRPC probe.
@Suite("Kubernetes manifests, run")
struct ManifestLaunchLiveTests {
    @Test("each Deployment's command line starts its service on its port, answering the gRPC probe", arguments: StorefrontServices.names)
    func deploymentCommandLineRuns(name: String) async throws {
        let manifests = try await Manifests.load()
        let deployment = try #require(try manifests.deployments().first { $0.metadata.name == name }, "no Deployment \(name)")
        let container = try #require(deployment.containers.first)
        let executable = try #require(container.command?.first)
        let containerPort = try #require(container.ports?.first?.containerPort)

        // What may not be literal here: a private loopback address instead of 0.0.0.0 (so that
        // a developer's running system on 127.0.0.1 is not in the way), a scratch directory
        // for /data, and --port left out so that the port is the executable's own default.
        let host = "127.\(Int.random(in: 1...254)).\(Int.random(in: 0...255)).\(Int.random(in: 1...254))"
        let scratch = try TestScratch.makeDirectory(prefix: "deploy-manifest-\(name)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var arguments: [String] = []
        var index = 0
        let args = container.args ?? []
        while index < args.count {
            switch args[index] {
            case "--host": arguments += ["--host", host]; index += 2
            case "--data-dir": arguments += ["--data-dir", scratch.path]; index += 2
            case "--port": index += 2
            default: arguments.append(args[index]); index += 1
            }
        }
        arguments += ["--grace-seconds", "2"]

        // The environment as the kubelet would set it: ConfigMap values, fresh secrets.
        let configMaps = try manifests.configMaps()
        var environment: [String: String] = [:]
        for variable in container.env ?? [] {
            if let value = variable.value {
                environment[variable.name] = value
            } else if let reference = variable.valueFrom?.configMapKeyRef {
                environment[variable.name] = try #require(configMaps.first { $0.metadata.name == reference.name }?.data?[reference.key])
            } else if variable.valueFrom?.secretKeyRef != nil {
                environment[variable.name] = TestScratch.randomKey()
            }
        }

        let service = try await ServiceProcess.launch(executable, arguments: arguments, environment: environment)
        await service.closeClient()
        #expect(service.port == containerPort, "\(name) listens on \(service.port) by default; the Deployment says \(containerPort)")
        #expect(service.port == StorefrontServices.port(of: name), "\(name)'s default port is not DESIGN.md's")

        // The upstreams (`auth-svc:7001`…) do not resolve here: the backends serve regardless;
        // the gateway answers NOT_SERVING until the auth and catalog services it routes to do.
        let expected = name == "gateway" ? 2 : 1
        var outcome = KubeletProbe.Outcome.failed("not asked")
        let answered = await eventually(within: .seconds(20), every: .milliseconds(250)) {
            outcome = (try? await KubeletProbe.check(host: host, port: service.port)) ?? .failed("python3 did not run")
            return outcome == .status(expected)
        }
        #expect(answered, "\(name) answered the probe with \(outcome), not status \(expected)\n\(service.log.tail(20))")

        let status = await service.stop(patience: .seconds(10))
        #expect(status == 0, "\(name) did not exit 0 on SIGTERM:\n\(service.log.tail(20))")
    }
}
