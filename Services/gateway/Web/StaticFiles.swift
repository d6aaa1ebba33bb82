import Foundation
import RPCHTTP2

/// The web storefront's files. Placeholder: being written (issue 26, point 6).
struct StaticFiles: Sendable {
    init(root: String?) throws {}

    /// Serves `request` when it names a file (or `/`); false otherwise.
    func serve(_ request: WebRequest, response: any WebResponse) -> Bool { false }
}
