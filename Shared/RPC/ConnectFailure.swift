internal import Foundation

/// Why a client's connection never became ready: recorded as the `cause` of the `UNAVAILABLE`
/// errors of the calls that waited for it (a cause never crosses the wire), so that a caller
/// can tell a host name that does not resolve from a server that is not there.
package enum ConnectFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host name has no address, or the resolver could not be asked.
    case hostNotFound(host: String)
    /// The system refused the connection or found no way to it (`ECONNREFUSED`,
    /// `EHOSTUNREACH`, `ENETUNREACH`, …).
    case connectFailed(errno: Int32)
    /// No connection within ``ClientConfiguration/connectTimeout``.
    case timedOut

    /// The failure in the system's words, e.g. `Connection refused`.
    package var description: String {
        switch self {
        case .hostNotFound(let host): "cannot resolve \(host)"
        case .connectFailed(let errno): String(cString: strerror(errno))
        case .timedOut: "connect timed out"
        }
    }
}
