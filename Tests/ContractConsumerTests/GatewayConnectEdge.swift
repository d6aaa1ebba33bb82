import ContractTesting
@testable import gateway
import RPC

/// The gateway's own Connect edge (``gateway/RPCEdge``) in front of a mock's router: a
/// consumer speaking Connect over HTTP/1.1 (StorefrontKit) reaches the mock exactly as it
/// reaches the gateway — its request decoded into metadata and a message by the code that
/// decodes it in production, the mock's answer encoded the same way — so the contract is
/// recorded from the consumer's real HTTP requests. Anything that is no procedure is not found.
struct GatewayConnectEdge: WebHandler {
    /// The Connect and gRPC-Web translation the gateway runs.
    let rpc: RPCEdge

    /// The edge of `router`, the mock's: no default deadline (the consumer's own travels).
    init(router: Router) {
        rpc = RPCEdge(router: router, defaultUnaryTimeout: nil, logger: ContractLogging.quiet)
    }

    /// Serves a procedure call through the edge; answers anything else 404.
    func serve(_ request: WebRequest, response: any WebResponse) {
        guard !rpc.serve(request, response: response) else { return }
        WebEdge.sendText(response, status: 404, "Not found.\n")
    }
}
