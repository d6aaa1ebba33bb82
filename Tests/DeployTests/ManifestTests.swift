import Foundation
import Testing

/// The Kubernetes manifests of deploy/k8s: well-formed, complete, and in agreement with the
/// ports, flags and environment variables the built executables actually accept.
@Suite("Kubernetes manifests")
struct ManifestTests {
    /// The apiVersion each kind of object must have.
    static let apiVersions = [
        "Deployment": "apps/v1", "Service": "v1", "PersistentVolumeClaim": "v1", "Secret": "v1", "ConfigMap": "v1",
        "Kustomization": "kustomize.config.k8s.io/v1beta1",
    ]

    /// The environment variables that come from the Secret rather than a flag.
    static let secretVariables: Set<String> = ["SHOP_ADMIN_API_KEY", "SHOP_INTERNAL_API_KEY"]

    @Test("every document parses, has a known kind with its apiVersion and a name, and no name repeats")
    func documentsAreWellFormed() async throws {
        let manifests = try await Manifests.load()
        #expect(!manifests.documents.isEmpty)
        var seen: Set<String> = []
        for document in manifests.documents {
            let kind = try #require(document.header.kind, "a document without kind in \(document.file)")
            let expected = try #require(Self.apiVersions[kind], "unexpected kind \(kind) in \(document.file)")
            #expect(document.header.apiVersion == expected, "\(document.label): apiVersion \(document.header.apiVersion ?? "none")")
            if kind != "Kustomization" {
                let name = try #require(document.header.metadata?.name, "\(document.label) has no name")
                #expect(seen.insert("\(kind)/\(name)").inserted, "\(kind)/\(name) is defined twice")
            }
        }
    }

    @Test("kustomization.yaml lists every other manifest, and only those")
    func kustomizationListsEverything() async throws {
        let manifests = try await Manifests.load()
        let kustomization = try #require(
            try manifests.objects("Kustomization", as: Kubernetes.Kustomization.self).first, "no kustomization.yaml")
        let listed = kustomization.resources ?? []
        #expect(Set(listed).count == listed.count, "a resource is listed twice: \(listed)")
        let others = Set(manifests.files.filter { $0 != "kustomization.yaml" })
        #expect(Set(listed) == others, "kustomization resources \(listed) are not the manifest files \(others.sorted())")
    }

    @Test("each service has one Deployment and a ClusterIP Service on DESIGN.md's default port")
    func deploymentAndServicePerService() async throws {
        let manifests = try await Manifests.load()
        let deployments = try manifests.deployments()
        let services = try manifests.services()
        #expect(Set(deployments.map(\.metadata.name)) == Set(StorefrontServices.names))
        #expect(Set(services.map(\.metadata.name)) == Set(StorefrontServices.names))
        for (name, port) in StorefrontServices.all {
            let deployment = try #require(deployments.first { $0.metadata.name == name }, "no Deployment \(name)")
            let service = try #require(services.first { $0.metadata.name == name }, "no Service \(name)")
            #expect(deployment.spec.replicas == 1, "\(name): replicas")
            let podLabels = deployment.spec.template.metadata?.labels ?? [:]
            let selector = deployment.spec.selector?.matchLabels ?? [:]
            #expect(!selector.isEmpty && selector.allSatisfy { podLabels[$0.key] == $0.value }, "\(name): selector does not match the pod labels")
            let container = try #require(deployment.containers.first, "\(name): no container")
            #expect(deployment.containers.count == 1, "\(name): one container")
            #expect(container.image?.hasPrefix("storefront") == true, "\(name): image \(container.image ?? "none")")
            #expect(container.command == [name], "\(name): the command must be the executable \(name)")
            let containerPorts = container.ports ?? []
            #expect(containerPorts.map(\.containerPort) == [port], "\(name): container ports \(containerPorts.map(\.containerPort))")

            #expect((service.spec.type ?? "ClusterIP") == "ClusterIP", "\(name): Service type")
            let routed = service.spec.selector ?? [:]
            #expect(!routed.isEmpty && routed.allSatisfy { podLabels[$0.key] == $0.value }, "\(name): Service selects no pod of the Deployment")
            #expect(service.spec.ports.map(\.port) == [port], "\(name): Service ports")
            if let servicePort = service.spec.ports.first {
                #expect((servicePort.protocol ?? "TCP") == "TCP")
                switch servicePort.targetPort {
                case .int(let number): #expect(number == port, "\(name): targetPort \(number)")
                case .string(let portName): #expect(containerPorts.contains { $0.name == portName }, "\(name): targetPort \(portName) names no container port")
                case nil: break  // the same as port
                }
            }
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

    @Test("services with a database keep it on a claim, one writer at a time: Recreate")
    func statefulServicesUseClaims() async throws {
        let manifests = try await Manifests.load()
        let claims = try manifests.claims()
        for deployment in try manifests.deployments() {
            let name = deployment.metadata.name
            let container = try #require(deployment.containers.first)
            let dataMount = try #require(container.volumeMounts?.first { $0.mountPath == "/data" }, "\(name): nothing mounted at /data")
            let volume = try #require(deployment.spec.template.spec.volumes?.first { $0.name == dataMount.name }, "\(name): no volume \(dataMount.name)")
            if StorefrontServices.stateful.contains(name) {
                let claimName = try #require(volume.persistentVolumeClaim?.claimName, "\(name): /data is not a PersistentVolumeClaim")
                let claim = try #require(claims.first { $0.metadata.name == claimName }, "\(name): no PersistentVolumeClaim \(claimName)")
                #expect(claim.spec.accessModes == ["ReadWriteOnce"], "\(claimName): access modes")
            }
            if volume.persistentVolumeClaim != nil {
                #expect(deployment.spec.strategy?.type == "Recreate", "\(name) writes to a claim, so the old pod must stop before the new one starts")
            }
            #expect(deployment.spec.template.spec.securityContext?.runAsNonRoot == true, "\(name): runAsNonRoot")
            #expect((deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30) > 10, "\(name): shorter than the services' grace period")
        }
        let mounted = Set(try manifests.deployments().flatMap { $0.spec.template.spec.volumes ?? [] }.compactMap(\.persistentVolumeClaim?.claimName))
        #expect(Set(claims.map(\.metadata.name)) == mounted, "a claim no Deployment mounts, or the reverse")
    }

    @Test("arguments listen on 0.0.0.0 at the service's port with /data, upstreams by their Service names")
    func argumentsUseClusterAddresses() async throws {
        let manifests = try await Manifests.load()
        let services = try manifests.services()
        for deployment in try manifests.deployments() {
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
                let upstream = String(flag.dropFirst(2).dropLast("-addr".count))
                let service = try #require(
                    services.first { $0.metadata.name == upstream || $0.metadata.name == "\(upstream)-svc" },
                    "\(name) takes \(flag) but there is no Service for \(upstream)")
                #expect(
                    options[flag] == "\(service.metadata.name):\(service.spec.ports.first?.port ?? 0)",
                    "\(name): \(flag) is \(options[flag] ?? "not given"), not the Service's DNS name and port")
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
                #expect(
                    help.environmentNames.contains(variable.name) || Self.secretVariables.contains(variable.name),
                    "\(executable) --help names no \(variable.name)")
            }
        }
    }

    @Test("keys come from the Secret by secretKeyRef, settings from the ConfigMap, and every reference resolves")
    func secretsAreReferencedNotInlined() async throws {
        let manifests = try await Manifests.load()
        let secrets = try manifests.secrets()
        let configMaps = try manifests.configMaps()
        for deployment in try manifests.deployments() {
            let name = deployment.metadata.name
            let container = try #require(deployment.containers.first)
            for variable in container.env ?? [] {
                let source = variable.valueFrom
                if Self.secretVariables.contains(variable.name) || variable.name.contains("KEY") || variable.name.contains("SECRET") {
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
            // A key on the command line would show in every process list.
            for argument in container.args ?? [] {
                #expect(!argument.lowercased().contains("api-key"), "\(name): an API key in args: \(argument)")
            }
            #expect(container.env?.contains { $0.name == "SHOP_INTERNAL_API_KEY" } == true, "\(name) needs the internal key")
        }
        // The template holds placeholders only: a real key must not be committed.
        for secret in secrets {
            for value in (secret.stringData ?? [:]).values {
                #expect(value.uppercased().contains("REPLACE"), "Secret \(secret.metadata.name) holds a value that is not a placeholder")
            }
            #expect(secret.data == nil, "Secret \(secret.metadata.name) carries base64 data; use placeholders in stringData")
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
