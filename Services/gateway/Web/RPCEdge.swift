import Foundation
import Logging
import RPC
import RPCHTTP2

/// Connect (JSON) and gRPC-Web calls, translated into calls of the gateway's own router.
/// Placeholder: being written (issue 26, points 2–3).
struct RPCEdge: Sendable {
    let router: Router
    let defaultUnaryTimeout: Duration?
    let logger: Logger

    /// Serves `request` when it is an RPC call (Connect or gRPC-Web); false when it is not.
    func serve(_ request: WebRequest, response: any WebResponse) -> Bool { false }
}
