/// A gRPC status code other than OK: success is not an error, so there is no `.ok` here.
///
/// Values and names follow https://github.com/grpc/grpc/blob/master/doc/statuscodes.md.
public struct RPCCode: Hashable, Sendable, CustomStringConvertible {
    /// The numeric code carried in the `grpc-status` trailer (1...16).
    public let rawValue: Int

    /// Creates a code from its wire value; `nil` for 0 (OK) and values outside 1...16.
    public init?(rawValue: Int) {
        guard (1...16).contains(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    private init(_ value: Int) { self.rawValue = value }

    /// The operation was cancelled, typically by the caller.
    public static let cancelled = RPCCode(1)
    /// An error that fits no other code.
    public static let unknown = RPCCode(2)
    /// The client gave bad input.
    public static let invalidArgument = RPCCode(3)
    /// The deadline passed before the operation completed.
    public static let deadlineExceeded = RPCCode(4)
    /// A requested entity was not found.
    public static let notFound = RPCCode(5)
    /// The entity a client tried to create already exists.
    public static let alreadyExists = RPCCode(6)
    /// The caller may not perform this operation.
    public static let permissionDenied = RPCCode(7)
    /// A limit or quota was reached.
    public static let resourceExhausted = RPCCode(8)
    /// The system is not in the state the operation requires.
    public static let failedPrecondition = RPCCode(9)
    /// A concurrency conflict; retry at a higher level.
    public static let aborted = RPCCode(10)
    /// A value was outside its valid range.
    public static let outOfRange = RPCCode(11)
    /// The method is not implemented or not supported.
    public static let unimplemented = RPCCode(12)
    /// An invariant broke inside the server.
    public static let `internal` = RPCCode(13)
    /// The service is unavailable right now; retrying may help.
    public static let unavailable = RPCCode(14)
    /// Unrecoverable data loss.
    public static let dataLoss = RPCCode(15)
    /// The caller is not authenticated.
    public static let unauthenticated = RPCCode(16)

    /// Every code, in numeric order.
    public static let all: [RPCCode] = (1...16).map(RPCCode.init)

    /// The canonical upper-case name, e.g. `NOT_FOUND`.
    public var name: String { Self.names[rawValue - 1] }

    /// Parses a canonical name such as `NOT_FOUND`.
    public init?(name: String) {
        guard let index = Self.names.firstIndex(of: name) else { return nil }
        self.rawValue = index + 1
    }

    public var description: String { name }

    private static let names = [
        "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
        "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
        "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    ]

    /// The code a client synthesizes when a response carries no `grpc-status`, from its HTTP
    /// status, per https://github.com/grpc/grpc/blob/master/doc/http-grpc-status-mapping.md.
    public static func forHTTPStatus(_ status: Int) -> RPCCode {
        switch status {
        case 400: return .internal
        case 401: return .unauthenticated
        case 403: return .permissionDenied
        case 404: return .unimplemented
        case 429, 502, 503, 504: return .unavailable
        default: return .unknown
        }
    }
}
