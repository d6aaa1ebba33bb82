import RPC

/// The exit codes of shopctl, one per class of failure, so that scripts can tell "sign in
/// again" from "the server is down" from "you asked for something wrong" (README, "Exit codes").
enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Everything worked.
    case success = 0
    /// Anything not classed below: an internal server error, a local file that cannot be written.
    case failure = 1
    /// The command line was wrong: an unknown flag, a missing argument, a bad value.
    case usage = 2
    /// Not signed in, the session ended, or the credentials were refused (`UNAUTHENTICATED`).
    case authentication = 3
    /// The request was refused as it stands: bad input, not found, already exists, a state that
    /// forbids it (a declined card, an empty basket), a conflict.
    case rejected = 4
    /// The gateway or a service behind it could not be reached in time (`UNAVAILABLE`,
    /// `DEADLINE_EXCEEDED`, no connection), or a health check found it not serving.
    case unavailable = 5
    /// The caller is known but may not do this (`PERMISSION_DENIED`, e.g. a wrong admin key).
    case permissionDenied = 6
    /// A rate limit or another limit was hit (`RESOURCE_EXHAUSTED`); wait and retry.
    case limited = 7

    /// The class of a gRPC status code.
    init(_ code: RPCCode) {
        switch code {
        case .unauthenticated: self = .authentication
        case .invalidArgument, .notFound, .alreadyExists, .failedPrecondition, .outOfRange, .aborted: self = .rejected
        case .unavailable, .deadlineExceeded: self = .unavailable
        case .permissionDenied: self = .permissionDenied
        case .resourceExhausted: self = .limited
        default: self = .failure
        }
    }

    /// The gRPC status code of the class, for a failure shopctl found itself: a usage error is
    /// `INVALID_ARGUMENT`, a local failure `UNKNOWN`.
    var code: RPCCode {
        switch self {
        case .success, .failure: .unknown
        case .usage: .invalidArgument
        case .authentication: .unauthenticated
        case .rejected: .failedPrecondition
        case .unavailable: .unavailable
        case .permissionDenied: .permissionDenied
        case .limited: .resourceExhausted
        }
    }
}
