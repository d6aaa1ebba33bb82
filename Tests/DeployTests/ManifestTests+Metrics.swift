import Foundation
import Testing

/// What Prometheus needs of the Kubernetes manifests: every pod says where its `/metrics` is
/// (the `prometheus.io/*` annotations Prometheus's usual `kubernetes_sd` relabeling reads), and
/// the gateway, which answers `/metrics` only to loopback callers by default, answers the
/// scraper on the pod network.
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
            let port = try #require(StorefrontServices.port(of: name), "unknown Deployment \(name)")
            let annotations = deployment.spec.template.metadata?.annotations ?? [:]
            for (key, value) in Self.scrapeAnnotations(port: port) {
                #expect(annotations[key] == value, "\(name): pod annotation \(key) is \(annotations[key] ?? "missing"), not \(value)")
            }
            let listening = deployment.containers.flatMap { $0.ports ?? [] }.map(\.containerPort)
            #expect(listening.contains(port), "\(name): the scrape port \(port) is none of the container's ports \(listening)")
        }
    }

    @Test("only the gateway is given --metrics-public: its /metrics must answer the scraper, which is no loopback peer")
    func gatewayMetricsAnswerThePodNetwork() async throws {
        for deployment in try await Manifests.load().deployments() {
            let name = deployment.metadata.name
            let arguments = try #require(deployment.containers.first, "\(name): no container").args ?? []
            #expect(arguments.contains("--metrics-public") == (name == "gateway"), "\(name): args \(arguments)")
        }
    }
}
