internal import Foundation
package import RPC
package import Telemetry

/// Serves `GET /metrics`: the process's ``MetricsRegistry`` in Prometheus's text format, over
/// HTTP/1.1 and HTTP/2 on the process's own port. A service serves nothing else that is not
/// gRPC (other paths 404); the gateway's web edge hands it `/metrics` only.
///
/// `publicAccess` false answers only peers on the loopback interface (others get 404, as if
/// nothing were there): the gateway's port faces clients, and what it counts is for its
/// operator. Scrapes are never rate limited.
package struct MetricsEndpoint: WebHandler {
    /// The registry written out.
    package let registry: MetricsRegistry
    /// Whether peers beyond loopback may read it.
    package let publicAccess: Bool

    /// The path served.
    package static let path = "/metrics"

    /// Serves `registry`, to every peer or only to loopback ones.
    package init(registry: MetricsRegistry, publicAccess: Bool = true) {
        self.registry = registry
        self.publicAccess = publicAccess
    }

    /// Only `/metrics`: a service's other requests that are not gRPC calls get the answers a
    /// gRPC server gives (405, 415), counted and logged as calls.
    package func serves(path: String) -> Bool { path == Self.path }

    package func serve(_ request: WebRequest, response: any WebResponse) {
        guard request.path == Self.path, publicAccess || Self.isLoopback(peer: request.peer) else {
            return response.send(status: 404, headers: ["content-type": "text/plain; charset=utf-8"], body: Data("not found\n".utf8))
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return response.send(
                status: 405, headers: ["allow": "GET, HEAD", "content-type": "text/plain; charset=utf-8"],
                body: Data("only GET and HEAD\n".utf8))
        }
        // Written on the cooperative pool, not the loop thread that read the request: the
        // text takes milliseconds, and the loop's other connections would wait for it. The
        // body goes for HEAD too: the transports send only its length then.
        Task { [registry] in
            let body = Data(registry.exposition().utf8)
            response.send(status: 200, headers: ["content-type": MetricsRegistry.contentType, "cache-control": "no-store"], body: body)
        }
    }

    /// Whether `peer` (`host:port`, IPv6 in brackets) is on the loopback interface:
    /// 127.0.0.0/8, `::1`, or 127.x mapped into IPv6.
    package static func isLoopback(peer: String) -> Bool {
        let host = ServerContext.host(ofPeer: peer)
        return host.hasPrefix("127.") || host == "::1" || host.lowercased().hasPrefix("::ffff:127.")
    }
}
