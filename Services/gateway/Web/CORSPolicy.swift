import Foundation
import RPCHTTP2

/// Cross-origin access for the origins given by `--cors-origin`.
/// Placeholder: being written (issue 26, point 4).
struct CORSPolicy: Sendable {
    let origins: [String]

    /// The headers of a `204` answering a preflight from an allowed origin; nil when `request`
    /// is no preflight of an allowed origin.
    func preflight(_ request: WebRequest) -> WebHeaders? { nil }

    /// `response`, adding the CORS headers every answer to an allowed origin carries.
    func decorate(_ response: any WebResponse, for request: WebRequest) -> any WebResponse { response }
}
