import Foundation
import Testing

/// What Prometheus needs of the Kubernetes manifests: every pod says where its `/metrics` is
/// (the `prometheus.io/*` annotations Prometheus's usual `kubernetes_sd` relabeling reads), and
/// the gateway, which answers `/metrics` on its clients' port only to loopback callers, serves
/// the scraper on a port of its own that its Service does not expose.
extension ManifestTests {
    /// The annotations every Deployment's pod template carries, `port` being its service's.
    static func scrapeAnnotations(port: Int) -> [String: String] {
        ["prometheus.io/scrape": "true", "prometheus.io/port": String(port), "prometheus.io/path": "/metrics"]
    }

    @Test("every Deployment's pods carry Prometheus's scrape annotations: /metrics on a port the container listens on")
    func podsAreAnnotatedForScraping() async throws {
        let deployments = try await Manifests.load().deployments()
        #expect(Set(deployments.map(\.metadata.name)) == Set(StorefrontServices.names))
        for deployment in deployments {
            let name = deployment.metadata.name
            let servicePort = try #require(StorefrontServices.port(of: name), "unknown Deployment \(name)")
            let port = name == "gateway" ? Self.gatewayMetricsPort : servicePort
            let annotations = deployment.spec.template.metadata?.annotations ?? [:]
            for (key, value) in Self.scrapeAnnotations(port: port) {
                #expect(annotations[key] == value, "\(name): pod annotation \(key) is \(annotations[key] ?? "missing"), not \(value)")
            }
            let listening = deployment.containers.flatMap { $0.ports ?? [] }.map(\.containerPort)
            #expect(listening.contains(port), "\(name): the scrape port \(port) is none of the container's ports \(listening)")
        }
    }

    /// The gateway's `--metrics-port` in its manifest.
    static let gatewayMetricsPort = 9464

    @Test("the gateway serves /metrics on --metrics-port, which its Service does not expose; nothing is given --metrics-public")
    func gatewayMetricsOnTheirOwnPort() async throws {
        let manifests = try await Manifests.load()
        for deployment in try manifests.deployments() {
            let name = deployment.metadata.name
            let arguments = try #require(deployment.containers.first, "\(name): no container").args ?? []
            #expect(!arguments.contains("--metrics-public"), "\(name): args \(arguments)")
            let metricsPort = arguments.firstIndex(of: "--metrics-port").map { arguments[arguments.index(after: $0)] }
            #expect(metricsPort == (name == "gateway" ? String(Self.gatewayMetricsPort) : nil), "\(name): args \(arguments)")
        }
        let exposed = try manifests.services().filter { $0.metadata.name == "gateway" }.flatMap { $0.spec.ports.map(\.port) }
        #expect(!exposed.isEmpty && !exposed.contains(Self.gatewayMetricsPort), "the gateway Service exposes \(exposed)")
    }
}
