public import JSON

/// The one error type of the RPC layer: a gRPC code, a stable machine-readable reason, a
/// human-readable message, optional structured details and the underlying cause.
///
/// Servers throw it (or an ``RPCErrorConvertible``) from handlers; clients receive it for
/// every non-OK status. The reason travels in the `shop-error-reason` trailer and the details
/// in `shop-error-details-bin` (see API.md §1).
public struct RPCError: Error, Sendable, CustomStringConvertible {
    /// The gRPC status code.
    public var code: RPCCode
    /// A stable reason such as `PRODUCT_NOT_FOUND`; `nil` when there is none.
    public var reason: String?
    /// A message for people; never contains secrets.
    public var message: String
    /// Structured details, e.g. `{"fieldViolations": [...]}`.
    public var details: JSONValue?
    /// What caused this error on this side; never sent over the wire.
    public var cause: (any Error)?

    /// Creates an error.
    public init(
        code: RPCCode, reason: String? = nil, message: String, details: JSONValue? = nil,
        cause: (any Error)? = nil
    ) {
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.cause = cause
    }

    public var description: String {
        var text = "\(code.name)"
        if let reason { text += " (\(reason))" }
        if !message.isEmpty { text += ": \(message)" }
        return text
    }
}

extension RPCError {
    /// An `INVALID_ARGUMENT` naming one bad field, with a `fieldViolations` detail.
    public static func invalidField(_ field: String, _ description: String, reason: String? = nil) -> RPCError {
        RPCError(
            code: .invalidArgument, reason: reason, message: "\(field): \(description)",
            details: .object([
                "fieldViolations": .array([.object(["field": .string(field), "description": .string(description)])])
            ]))
    }

    /// An `INVALID_ARGUMENT` naming one bad field for programs (a `fieldViolations` detail with
    /// the field's path and `description`) and, for people, a sentence in their words:
    /// `subject` and `description`, e.g. "The new password must be at least 8 characters long."
    /// rather than "newPassword: must be …". Every service's field errors go through here.
    public static func invalidField(_ field: String, _ description: String, reason: String? = nil, subject: String) -> RPCError {
        var error = RPCError.invalidField(field, description, reason: reason)
        error.message = "\(subject) \(description)."
        return error
    }

    /// The error a client sees for an unexpected server-side failure; the cause stays in the log.
    /// The same error with `cause` recorded, for logs; the cause is never sent to the caller.
    public func causedBy(_ cause: any Error) -> RPCError {
        var error = self
        error.cause = cause
        return error
    }

    public static func internalError(cause: any Error) -> RPCError {
        RPCError(code: .internal, message: "Internal error.", cause: cause)
    }
}

/// An error that knows how it reaches a client: each service's error enum conforms.
public protocol RPCErrorConvertible: Error {
    /// The error as the client should see it.
    var rpcError: RPCError { get }
}

extension RPCError {
    /// Converts any thrown error into what a client should see: ``RPCError`` and
    /// ``RPCErrorConvertible`` as they are, cancellation as `CANCELLED`, anything else as a
    /// generic `INTERNAL` that keeps the cause for the log.
    public init(converting error: any Error) {
        switch error {
        case let error as RPCError:
            self = error
        case let error as any RPCErrorConvertible:
            self = error.rpcError
        case is CancellationError:
            self = RPCError(code: .cancelled, message: "The call was cancelled.", cause: error)
        default:
            self = .internalError(cause: error)
        }
    }
}
