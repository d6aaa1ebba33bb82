import Foundation
import ServiceTestSupport
import Testing

/// The Kubernetes manifests of deploy/k8s: well-formed, complete, and in agreement with the
/// ports, flags and environment variables the built executables actually accept; replicas on
/// a shared PostgreSQL database, found through headless Services, each service kept serving
/// by a PodDisruptionBudget; and the optional PostgreSQL server of deploy/k8s/postgres.
@Suite("Kubernetes manifests")
struct ManifestTests {
    /// The apiVersion each kind of object must have.
    static let apiVersions = [
        "Deployment": "apps/v1", "StatefulSet": "apps/v1", "Service": "v1", "PersistentVolumeClaim": "v1", "Secret": "v1",
        "ConfigMap": "v1", "PodDisruptionBudget": "policy/v1", "Kustomization": "kustomize.config.k8s.io/v1beta1",
        "Component": "kustomize.config.k8s.io/v1alpha1",
    ]

    /// The environment variables that come from a Secret rather than a flag.
    static let secretVariables: Set<String> = [
        "SHOP_ADMIN_API_KEY", "SHOP_INTERNAL_API_KEY", "SHOP_DATABASE_URL", "PGPASSWORD", "SHOP_CATALOG_PAGE_TOKEN_KEY",
        "SHOP_ORDER_PAGE_TOKEN_KEY", "SHOP_ORDER_REQUEST_KEY",
    ]

    /// The keys each service otherwise generates into its data directory
    /// (`ServiceSecret.resolve(environmentName:path:)`, read from its sources), which its
    /// replicas must share: each Deployment reads them from the Secret.
    static func sharedKeys(of service: String) throws -> Set<String> {
        let directory = Repository.url("Services/\(service)")
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        var keys: Set<String> = []
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: #/environmentName: "(SHOP_[A-Z_]+)"/#) { keys.insert(String(match.output.1)) }
        }
        return keys
    }

    /// The two directories of manifests: the default one and the PostgreSQL component.
    static let directories = [Manifests.baseDirectory, Manifests.postgresDirectory]

    @Test("every document parses, has a known kind with its apiVersion and a name, and no name repeats", arguments: ManifestTests.directories)
    func documentsAreWellFormed(directory: URL) async throws {
        let manifests = try await Manifests.load(directory)
        #expect(!manifests.documents.isEmpty)
        var seen: Set<String> = []
        for document in manifests.documents {
            let kind = try #require(document.header.kind, "a document without kind in \(document.file)")
            let expected = try #require(Self.apiVersions[kind], "unexpected kind \(kind) in \(document.file)")
            #expect(document.header.apiVersion == expected, "\(document.label): apiVersion \(document.header.apiVersion ?? "none")")
            if kind != "Kustomization" && kind != "Component" {
                let name = try #require(document.header.metadata?.name, "\(document.label) has no name")
                #expect(seen.insert("\(kind)/\(name)").inserted, "\(kind)/\(name) is defined twice")
            }
        }
    }

    @Test("each kustomization lists every other manifest of its directory, and only those", arguments: ManifestTests.directories)
    func kustomizationListsEverything(directory: URL) async throws {
        let manifests = try await Manifests.load(directory)
        let kustomization = try #require(try manifests.kustomization(), "no kustomization.yaml in \(directory.path)")
        let listed = kustomization.resources ?? []
        #expect(Set(listed).count == listed.count, "a resource is listed twice: \(listed)")
        let others = Set(manifests.files.filter { $0 != "kustomization.yaml" })
        #expect(Set(listed) == others, "kustomization resources \(listed) are not the manifest files \(others.sorted())")
    }

    @Test("the default kustomization is a Kustomization that leaves the PostgreSQL server out; that one is a Component")
    func postgresIsOptional() async throws {
        let base = try await Manifests.load()
        #expect(base.documents(ofKind: "Kustomization").count == 1)
        #expect(try base.statefulSets().isEmpty, "deploy/k8s runs a StatefulSet; production points at a managed PostgreSQL")
        #expect(try base.claims().isEmpty, "deploy/k8s claims storage; no service keeps data in its pods")
        let component = try await Manifests.load(Manifests.postgresDirectory)
        #expect(component.documents(ofKind: "Component").count == 1, "deploy/k8s/postgres is not a kustomize Component")
    }

    @Test("each service has one Deployment of at least two replicas, and its callers a Service on DESIGN.md's port")
    func deploymentAndServicePerService() async throws {
        let manifests = try await Manifests.load()
        let deployments = try manifests.deployments()
        let services = try manifests.services()
        #expect(Set(deployments.map(\.metadata.name)) == Set(StorefrontServices.names))
        for (name, port) in StorefrontServices.all {
            let deployment = try #require(deployments.first { $0.metadata.name == name }, "no Deployment \(name)")
            #expect((deployment.spec.replicas ?? 1) >= 2, "\(name): \(deployment.spec.replicas ?? 1) replica(s); one lost pod would take it down")
            #expect(deployment.spec.selector?.selects(deployment.podLabels) == true, "\(name): selector does not match the pod labels")
            let container = try #require(deployment.containers.first, "\(name): no container")
            #expect(deployment.containers.count == 1, "\(name): one container")
            #expect(container.image?.hasPrefix("storefront") == true, "\(name): image \(container.image ?? "none")")
            #expect(container.command == [name], "\(name): the command must be the executable \(name)")
            let containerPorts = container.ports ?? []
            // The service's port first; the gateway's own /metrics port beside it (ManifestTests+Metrics).
            let expectedPorts = name == "gateway" ? [port, Self.gatewayMetricsPort] : [port]
            #expect(containerPorts.map(\.containerPort) == expectedPorts, "\(name): container ports \(containerPorts.map(\.containerPort))")

            // The gateway: one stable address for clients. The services: every replica's
            // address for their callers, which balance over them.
            let selecting = services.filter { Kubernetes.selects($0.spec.selector, deployment.podLabels) }
            let service = try #require(
                name == "gateway"
                    ? selecting.first { $0.metadata.name == name && !$0.isHeadless && ($0.spec.type ?? "ClusterIP") == "ClusterIP" }
                    : selecting.first(where: \.isHeadless),
                "\(name): no \(name == "gateway" ? "ClusterIP Service gateway" : "headless Service") selects its pods")
            try Self.expectRoutes(service, to: containerPorts, port: port)
        }
    }

    @Test("readiness, liveness and startup probes are native gRPC health checks on the service's port")
    func probesAreGRPC() async throws {
        let manifests = try await Manifests.load()
        for deployment in try manifests.deployments() {
            let name = deployment.metadata.name
            let port = try #require(StorefrontServices.port(of: name), "unknown Deployment \(name)")
            for container in deployment.containers {
                #expect(container.readinessProbe != nil, "\(name): no readinessProbe")
                #expect(container.livenessProbe != nil, "\(name): no livenessProbe")
                let probes = [("readiness", container.readinessProbe), ("liveness", container.livenessProbe), ("startup", container.startupProbe)]
                for case let (kind, probe?) in probes {
                    #expect(probe.grpc?.port == port, "\(name): \(kind) probe is not grpc on \(port)")
                    #expect((probe.grpc?.service ?? "") == "", "\(name): \(kind) probe asks a named service")
                    #expect(probe.httpGet == nil && probe.tcpSocket == nil && probe.exec == nil, "\(name): \(kind) probe has a second handler")
                }
            }
        }
    }

    @Test("no pod keeps data of its own: /data is an emptyDir, no claim, and replicas spread over nodes")
    func podsKeepNoData() async throws {
        let manifests = try await Manifests.load()
        for deployment in try manifests.deployments() {
            let name = deployment.metadata.name
            let container = try #require(deployment.containers.first)
            let dataMount = try #require(container.volumeMounts?.first { $0.mountPath == "/data" }, "\(name): nothing mounted at /data")
            let volumes = deployment.spec.template.spec.volumes ?? []
            let volume = try #require(volumes.first { $0.name == dataMount.name }, "\(name): no volume \(dataMount.name)")
            #expect(volume.emptyDir != nil, "\(name): /data is not an emptyDir; replicas keep their data in PostgreSQL")
            #expect(volumes.allSatisfy { $0.persistentVolumeClaim == nil }, "\(name) mounts a claim, which its replicas cannot share")
            #expect(deployment.spec.strategy?.type == "RollingUpdate", "\(name): updates must roll")
            let spread = deployment.spec.template.spec.topologySpreadConstraints ?? []
            #expect(
                spread.contains { $0.topologyKey == "kubernetes.io/hostname" && $0.labelSelector?.selects(deployment.podLabels) == true },
                "\(name): its replicas may all land on one node")
            #expect(deployment.spec.template.spec.securityContext?.runAsNonRoot == true, "\(name): runAsNonRoot")
            #expect((deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30) > 10, "\(name): shorter than the services' grace period")
        }
    }

    @Test("one PodDisruptionBudget per Deployment selects its pods, lets one go at a time and keeps two; rollouts stay within it")
    func disruptionBudgetPerDeployment() async throws {
        let manifests = try await Manifests.load()
        let deployments = try manifests.deployments()
        let budgets = try manifests.disruptionBudgets()
        for deployment in deployments {
            let name = deployment.metadata.name
            let replicas = deployment.spec.replicas ?? 1
            let selecting = budgets.filter { $0.spec.selector?.selects(deployment.podLabels) == true }
            #expect(selecting.count == 1, "\(name): \(selecting.count) PodDisruptionBudgets select its pods")
            guard let budget = selecting.first else { continue }
            let others = deployments.filter { $0.metadata.name != name && budget.spec.selector?.selects($0.podLabels) == true }
            #expect(others.isEmpty, "PodDisruptionBudget \(budget.metadata.name) also counts the pods of \(others.map(\.metadata.name))")
            let allowed = try #require(budget.allowedDisruptions(of: replicas), "\(budget.metadata.name): give minAvailable or maxUnavailable as a number")
            #expect(allowed >= 1, "\(budget.metadata.name) lets no pod go: a node drain would wait for ever")
            #expect(replicas - allowed >= 2, "\(budget.metadata.name) lets \(allowed) of \(replicas) pods go at once")
            // A rollout takes pods down too; it must not take more than the budget allows.
            guard case .int(let rolling)? = deployment.spec.strategy?.rollingUpdate?.maxUnavailable else {
                Issue.record("\(name): give rollingUpdate.maxUnavailable as a number")
                continue
            }
            #expect(rolling <= allowed, "\(name): a rollout may take \(rolling) pods, the budget allows \(allowed)")
        }
        #expect(budgets.count == deployments.count, "a PodDisruptionBudget without a Deployment")
    }

    @Test("arguments listen on 0.0.0.0 at the service's port with /data; upstreams are headless Services of the upstream's pods")
    func argumentsUseClusterAddresses() async throws {
        let manifests = try await Manifests.load()
        let services = try manifests.services()
        let deployments = try manifests.deployments()
        for deployment in deployments {
            let name = deployment.metadata.name
            let container = try #require(deployment.containers.first)
            let options = try Self.options(container.args ?? [], of: name)
            #expect(options["--host"] == "0.0.0.0", "\(name): --host")
            #expect(options["--port"] == StorefrontServices.port(of: name).map(String.init), "\(name): --port")
            #expect(options["--data-dir"] == "/data", "\(name): --data-dir")
            // Every upstream the executable can be given is given: its default, 127.0.0.1, is
            // the pod itself.
            let help = try await ExecutableHelp.of(name)
            for flag in help.flags where flag.hasSuffix("-addr") {
                let upstreamName = String(flag.dropFirst(2).dropLast("-addr".count))
                let upstream = try #require(
                    deployments.first { $0.metadata.name == upstreamName || $0.metadata.name == "\(upstreamName)-svc" },
                    "\(name) takes \(flag) but there is no Deployment for \(upstreamName)")
                let value = try #require(options[flag], "\(name): \(flag) is not given")
                let (host, port) = try #require(Self.hostAndPort(value), "\(name): \(flag) \(value) is not one host:port")
                let service = try #require(services.first { $0.metadata.name == host }, "\(name): \(flag) names no Service: \(value)")
                #expect(service.isHeadless, "\(name): \(flag) names \(host), which is not headless: one address for every replica")
                #expect(
                    Kubernetes.selects(service.spec.selector, upstream.podLabels),
                    "\(name): \(flag) names \(host), which does not select the pods of \(upstream.metadata.name)")
                // A headless Service's DNS name gives the pods' addresses: the port dialled is
                // the container's, whatever the Service maps.
                #expect(upstream.containers.first?.ports?.map(\.containerPort) == [port], "\(name): \(flag) \(value) is not the port of \(upstream.metadata.name)")
                #expect(service.spec.ports.contains { $0.port == port }, "\(name): \(host) has no port \(port)")
            }
        }
    }

    @Test("every flag and environment variable a Deployment sets is one its executable accepts")
    func flagsAndVariablesAreAccepted() async throws {
        let manifests = try await Manifests.load()
        let shipped = try Repository.shippedExecutables()
        for deployment in try manifests.deployments() {
            let container = try #require(deployment.containers.first)
            let executable = try #require(container.command?.first, "\(deployment.metadata.name): no command")
            try #require(shipped.contains(executable), "\(executable) is not an executable target of Package.swift")
            let help = try await ExecutableHelp.of(executable)
            for flag in try Self.options(container.args ?? [], of: executable).keys {
                #expect(help.accepts(flag), "\(executable) --help does not list \(flag)")
            }
            for variable in container.env ?? [] {
                // The keys are named in no help (they are never flags); every other variable,
                // the database's included, must be one the executable reads.
                let isAPIKey = variable.name.hasSuffix("_KEY") && Self.secretVariables.contains(variable.name)
                #expect(help.environmentNames.contains(variable.name) || isAPIKey, "\(executable) --help names no \(variable.name)")
            }
        }
    }

    @Test("keys, the database and its password come from Secrets by secretKeyRef, settings from the ConfigMap, and every reference resolves")
    func secretsAreReferencedNotInlined() async throws {
        let manifests = try await Manifests.load()
        let secrets = try manifests.secrets()
        let configMaps = try manifests.configMaps()
        for deployment in try manifests.deployments() {
            let name = deployment.metadata.name
            let container = try #require(deployment.containers.first)
            for variable in container.env ?? [] {
                let source = variable.valueFrom
                if Self.secretVariables.contains(variable.name) || ["KEY", "SECRET", "PASSWORD"].contains(where: variable.name.contains) {
                    #expect(variable.value == nil && source?.secretKeyRef != nil, "\(name): \(variable.name) must come from a secretKeyRef")
                }
                if let reference = source?.secretKeyRef {
                    let secret = try #require(secrets.first { $0.metadata.name == reference.name }, "\(name): no Secret \(reference.name)")
                    #expect(secret.keys.contains(reference.key), "\(name): Secret \(reference.name) has no key \(reference.key)")
                }
                if let reference = source?.configMapKeyRef {
                    let map = try #require(configMaps.first { $0.metadata.name == reference.name }, "\(name): no ConfigMap \(reference.name)")
                    #expect(map.data?[reference.key] != nil, "\(name): ConfigMap \(reference.name) has no key \(reference.key)")
                }
            }
            for volume in deployment.spec.template.spec.volumes ?? [] {
                if let source = volume.secret {
                    #expect(secrets.contains { $0.metadata.name == source.secretName }, "\(name): volume \(volume.name) mounts no Secret: \(source.secretName)")
                }
            }
            // A key on the command line would show in every process list.
            for argument in container.args ?? [] {
                #expect(!argument.lowercased().contains("api-key"), "\(name): an API key in args: \(argument)")
                #expect(!argument.contains("postgres://") && !argument.contains("postgresql://"), "\(name): a database URL in args: \(argument)")
            }
            let variables = Set((container.env ?? []).map(\.name))
            #expect(variables.contains("SHOP_INTERNAL_API_KEY"), "\(name) needs the internal key")
            if StorefrontServices.stateful.contains(name) {
                #expect(variables.isSuperset(of: ["SHOP_DATABASE_URL", "PGPASSWORD"]), "\(name) is not given the database and its password")
            }
            // A key a replica would otherwise generate for itself must be the same on all.
            let shared = try Self.sharedKeys(of: name)
            #expect(variables.isSuperset(of: shared), "\(name) replicas do not share \(shared.subtracting(variables).sorted())")
        }
        // The template holds placeholders only: a real key must not be committed.
        for secret in secrets {
            for value in (secret.stringData ?? [:]).values {
                #expect(value.uppercased().contains("REPLACE"), "Secret \(secret.metadata.name) holds a value that is not a placeholder")
            }
            #expect(secret.data == nil, "Secret \(secret.metadata.name) carries base64 data; use placeholders in stringData")
        }
    }

    @Test("auth-svc's replicas sign with one key: --signing-key names a key of a Secret mounted read-only")
    func signingKeyIsShared() async throws {
        let manifests = try await Manifests.load()
        let secrets = try manifests.secrets()
        let deployment = try #require(try manifests.deployments().first { $0.metadata.name == "auth-svc" }, "no Deployment auth-svc")
        let container = try #require(deployment.containers.first)
        let path = try #require(try Self.options(container.args ?? [], of: "auth-svc")["--signing-key"], "auth-svc: no --signing-key")
        let (mount, volume, key) = try #require(
            Self.secretFile(at: path, in: deployment), "auth-svc: --signing-key \(path) lies in no Secret volume")
        #expect(mount.readOnly == true, "auth-svc: the signing key's volume is writable")
        #expect(volume.optional != true, "auth-svc would start without the shared key and make one of its own")
        let secret = try #require(secrets.first { $0.metadata.name == volume.secretName }, "no Secret \(volume.secretName)")
        #expect(secret.keys.contains(key), "Secret \(volume.secretName) has no key \(key), the file --signing-key names")
    }

    @Test("the PostgreSQL component: one server on a claim template, a Service, the Secret's password, the URL deploy/README.md gives")
    func postgresComponent() async throws {
        let component = try await Manifests.load(Manifests.postgresDirectory)
        let secrets = try await Manifests.load().secrets()
        let server = try #require(try component.statefulSets().first, "deploy/k8s/postgres has no StatefulSet")
        #expect(try component.statefulSets().count == 1)
        #expect(server.spec.replicas == 1, "one PostgreSQL server: its replicas would not share the data")
        #expect(server.spec.selector?.selects(server.podLabels) == true, "the StatefulSet's selector does not match its pods")
        let container = try #require(server.containers.first, "the StatefulSet has no container")
        #expect(container.image?.hasPrefix("postgres:") == true, "image \(container.image ?? "none")")

        // Its data on a claim of its own, under the directory PGDATA names.
        let claims = server.spec.volumeClaimTemplates ?? []
        let environment = Dictionary((container.env ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let dataDirectory = try #require(environment["PGDATA"]?.value, "PGDATA is not set")
        let mount = try #require(
            container.volumeMounts?.first { dataDirectory == $0.mountPath || dataDirectory.hasPrefix($0.mountPath + "/") },
            "nothing is mounted at PGDATA \(dataDirectory)")
        let claim = try #require(claims.first { $0.metadata.name == mount.name }, "\(mount.mountPath) is not a claim template")
        #expect(claim.spec.accessModes == ["ReadWriteOnce"], "claim access modes")

        // The password is the one the services read as PGPASSWORD.
        let password = try #require(environment["POSTGRES_PASSWORD"]?.valueFrom?.secretKeyRef, "POSTGRES_PASSWORD is not from a Secret")
        let deployments = try await Manifests.load().deployments()
        for deployment in deployments where StorefrontServices.stateful.contains(deployment.metadata.name) {
            let read = deployment.containers.first?.env?.first { $0.name == "PGPASSWORD" }?.valueFrom?.secretKeyRef
            #expect(read?.name == password.name && read?.key == password.key, "\(deployment.metadata.name) reads another password")
        }
        #expect(secrets.first { $0.metadata.name == password.name }?.keys.contains(password.key) == true, "no Secret \(password.name) with \(password.key)")

        // The Service the URL names routes to the server's port.
        let service = try #require(try component.services().first { Kubernetes.selects($0.spec.selector, server.podLabels) }, "no Service selects the server")
        #expect(server.spec.serviceName == service.metadata.name, "serviceName \(server.spec.serviceName ?? "none")")
        let serverPort = try #require(container.ports?.first { $0.containerPort == 5432 }, "the server's container port is not 5432")
        let servicePort = try #require(service.spec.ports.first, "the Service has no port")
        try Self.expectRoutes(service, to: [serverPort], port: servicePort.port)
        let user = try #require(environment["POSTGRES_USER"]?.value, "POSTGRES_USER is not set")
        let database = try #require(environment["POSTGRES_DB"]?.value, "POSTGRES_DB is not set")
        let url = "postgres://\(user)@\(service.metadata.name):\(servicePort.port)/\(database)"
        #expect(try Repository.text("deploy/README.md").contains(url), "deploy/README.md does not give the bundled server's URL \(url)")
        #expect(try Repository.text("deploy/k8s/secret.yaml").contains(url), "secret.yaml does not give the bundled server's URL \(url)")
    }

    @Test(
        "kubectl kustomize builds deploy/k8s, deploy/k8s/postgres and both together, object for object",
        .enabled(if: ManifestTests.isOnPath("kubectl"), "kubectl is not installed"))
    func kustomizeBuilds() async throws {
        let base = try await Manifests.load()
        let component = try await Manifests.load(Manifests.postgresDirectory)
        let baseObjects = try Self.objectNames(of: base)
        let componentObjects = try Self.objectNames(of: component)
        #expect(try await Self.kustomize(Manifests.baseDirectory) == baseObjects)
        #expect(try await Self.kustomize(Manifests.postgresDirectory) == componentObjects)

        // An overlay of one's own, as deploy/README.md shows: the component beside the base
        // (kustomize refuses a base that is a parent directory of its overlay).
        let scratch = try TestScratch.makeDirectory(prefix: "deploy-kustomize")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let storefront = Self.relativePath(of: Manifests.baseDirectory, from: scratch)
        let overlay = "resources: [\(storefront)]\ncomponents: [\(storefront)/postgres]\n"
        try Data(overlay.utf8).write(to: scratch.appendingPathComponent("kustomization.yaml"))
        #expect(baseObjects.isDisjoint(with: componentObjects), "the component redefines \(baseObjects.intersection(componentObjects))")
        #expect(try await Self.kustomize(scratch) == baseObjects.union(componentObjects))
    }

    /// Expects `service` to route `port` to one of `containerPorts` (by number or by name), over TCP.
    static func expectRoutes(
        _ service: Kubernetes.Service, to containerPorts: [Kubernetes.Container.Port], port: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let name = service.metadata.name
        #expect(service.spec.ports.map(\.port) == [port], "\(name): Service ports", sourceLocation: sourceLocation)
        guard let servicePort = service.spec.ports.first else { return }
        #expect((servicePort.protocol ?? "TCP") == "TCP", sourceLocation: sourceLocation)
        switch servicePort.targetPort {
        case .int(let number):
            #expect(containerPorts.contains { $0.containerPort == number }, "\(name): targetPort \(number)", sourceLocation: sourceLocation)
        case .string(let portName):
            #expect(containerPorts.contains { $0.name == portName }, "\(name): targetPort \(portName) names no container port", sourceLocation: sourceLocation)
        case nil:
            #expect(containerPorts.contains { $0.containerPort == port }, "\(name): port \(port) is no container port", sourceLocation: sourceLocation)
        }
    }

    /// The Secret volume, its mount and the key of the file at `path` in `deployment`'s first
    /// container; nil when `path` lies in no Secret volume.
    static func secretFile(
        at path: String, in deployment: Kubernetes.Deployment
    ) -> (mount: Kubernetes.Container.VolumeMount, volume: Kubernetes.Volume.SecretSource, key: String)? {
        let volumes = deployment.spec.template.spec.volumes ?? []
        for mount in deployment.containers.first?.volumeMounts ?? [] where path.hasPrefix(mount.mountPath + "/") {
            guard let source = volumes.first(where: { $0.name == mount.name })?.secret else { continue }
            return (mount, source, String(path.dropFirst(mount.mountPath.count + 1)))
        }
        return nil
    }

    /// `host:port` split; nil for a list or a value without a numeric port.
    static func hostAndPort(_ value: String) -> (String, Int)? {
        guard !value.contains(","), let colon = value.lastIndex(of: ":"), let port = Int(value[value.index(after: colon)...]) else {
            return nil
        }
        return (String(value[..<colon]), port)
    }

    /// `kind/name` of every object of `manifests` but its kustomization.
    static func objectNames(of manifests: Manifests) throws -> Set<String> {
        Set(manifests.documents.compactMap { document -> String? in
            guard let kind = document.header.kind, kind != "Kustomization", kind != "Component" else { return nil }
            return "\(kind)/\(document.header.metadata?.name ?? "?")"
        })
    }

    /// `kind/name` of every object `kubectl kustomize directory` puts out.
    static func kustomize(_ directory: URL, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Set<String> {
        let script = """
            import subprocess, sys, yaml
            built = subprocess.run(["kubectl", "kustomize", sys.argv[1]], capture_output=True, text=True)
            if built.returncode != 0:
                sys.exit(built.stderr)
            for document in yaml.safe_load_all(built.stdout):
                print(document["kind"] + "/" + document["metadata"]["name"])
            """
        let result = try await Command.run("python3", ["-c", script, directory.path], timeout: .seconds(60))
        try #require(result.status == 0, "kubectl kustomize \(directory.path): \(result)", sourceLocation: sourceLocation)
        return Set(result.output.split(separator: "\n").map(String.init))
    }

    /// The path of `target` relative to the directory `base` (kustomize takes no absolute paths).
    static func relativePath(of target: URL, from base: URL) -> String {
        let targetParts = target.standardizedFileURL.pathComponents
        let baseParts = base.standardizedFileURL.pathComponents
        var common = 0
        while common < min(targetParts.count, baseParts.count) && targetParts[common] == baseParts[common] { common += 1 }
        let up = Array(repeating: "..", count: baseParts.count - common)
        return (up + targetParts[common...]).joined(separator: "/")
    }

    /// Whether an executable named `name` is in one of `PATH`'s directories.
    static func isOnPath(_ name: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
        }
    }

    /// `args` as flag → value pairs: every element starting with `--` is a flag, followed by
    /// its value unless the next element is a flag too (a switch such as `--no-seed`).
    static func options(
        _ arguments: [String], of name: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String: String] {
        var options: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let flag = arguments[index]
            try #require(flag.hasPrefix("--"), "\(name): argument \(flag) is not a --flag", sourceLocation: sourceLocation)
            let value = index + 1 < arguments.count && !arguments[index + 1].hasPrefix("--") ? arguments[index + 1] : ""
            #expect(options[flag] == nil, "\(name): \(flag) given twice", sourceLocation: sourceLocation)
            options[flag] = value
            index += value.isEmpty ? 1 : 2
        }
        return options
    }
}
