import Foundation
import Logging
import RPC
import RPCHTTP2

/// The pages a mailed link opens: `/verify-email` and `/reset-password`.
/// Placeholder: being written (issue 26, point 5).
struct AccountPages: Sendable {
    let router: Router
    let logger: Logger

    /// Serves `request` when it is for one of the pages; false otherwise.
    func serve(_ request: WebRequest, response: any WebResponse) -> Bool { false }
}
