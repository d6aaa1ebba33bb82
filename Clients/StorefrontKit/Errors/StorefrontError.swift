public import Contracts
import Foundation
public import JSON
import RPC

/// What every StorefrontKit call throws: the status code, the stable reason an app branches
/// on (``Reason``; `.other` keeps a reason this version does not know), and the server's
/// message, written for people. Switch on ``reason`` as a Firebase app switches on
/// `AuthErrorCode`:
///
/// ```swift
/// do { try await client.auth.signIn(email: email, password: password) }
/// catch let error as StorefrontError where error.reason == .emailNotVerified { showVerifyHint() }
/// ```
public struct StorefrontError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The gRPC/Connect status code.
    public var code: Code
    /// The stable reason; nil when the server gave none (`INTERNAL`, a lost connection).
    public var reason: Reason?
    /// The server's message, for people; never a secret.
    public var message: String
    /// The structured details as the server sent them, e.g. `{"fieldViolations": [...]}`.
    public var details: JSONValue?

    /// An error of `code` with `reason`, `message` and `details`.
    public init(code: Code, reason: Reason? = nil, message: String, details: JSONValue? = nil) {
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
    }

    /// The error an ``RPC/RPCError`` stands for, its reason read with its details.
    init(_ error: RPCError) {
        self.init(
            code: Code(error.code), reason: error.reason.map { Reason(wireName: $0, details: error.details) },
            message: error.message, details: error.details)
    }

    /// Every error a call can end with, as ``StorefrontError``: an ``RPC/RPCError`` mapped,
    /// cancellation as `.cancelled`, anything else `.unknown` with its description.
    static func converting(_ error: any Error) -> StorefrontError {
        if let error = error as? StorefrontError { return error }
        return StorefrontError(RPCError(converting: error))
    }

    /// The products whose stock fell short, from an `OUT_OF_STOCK` of placing an order
    /// (each with what is left and what was wanted); empty for other errors.
    public var stockShortages: [StockShortage] { StockShortage.list(in: details) }

    /// The bad fields of an `INVALID_ARGUMENT`: field path and what is wrong with it.
    public var fieldViolations: [(field: String, description: String)] {
        (details?["fieldViolations"]?.arrayValue ?? []).compactMap { entry in
            guard let field = entry["field"]?.stringValue else { return nil }
            return (field, entry["description"]?.stringValue ?? "")
        }
    }

    /// `CODE (REASON): message`.
    public var description: String {
        var text = code.name
        if let reason { text += " (\(reason.wireName))" }
        if !message.isEmpty { text += ": \(message)" }
        return text
    }
}

extension StorefrontError {
    /// A gRPC/Connect status code (API.md §1), by name: `.notFound`, `.unauthenticated` …
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The numeric code, 1...16.
        public let rawValue: Int

        /// The code `code` of the RPC layer.
        init(_ code: RPCCode) { rawValue = code.rawValue }

        /// The canonical upper-case name, e.g. `NOT_FOUND`.
        public var name: String { RPCCode(rawValue: rawValue)?.name ?? "UNKNOWN" }
        /// The canonical name.
        public var description: String { name }

        /// The call was cancelled.
        public static let cancelled = Code(.cancelled)
        /// An error that fits no other code.
        public static let unknown = Code(.unknown)
        /// Bad input.
        public static let invalidArgument = Code(.invalidArgument)
        /// The deadline passed.
        public static let deadlineExceeded = Code(.deadlineExceeded)
        /// Not found.
        public static let notFound = Code(.notFound)
        /// Already exists.
        public static let alreadyExists = Code(.alreadyExists)
        /// Wrong user or key.
        public static let permissionDenied = Code(.permissionDenied)
        /// A limit or rate limit.
        public static let resourceExhausted = Code(.resourceExhausted)
        /// The state forbids it.
        public static let failedPrecondition = Code(.failedPrecondition)
        /// A concurrency conflict.
        public static let aborted = Code(.aborted)
        /// Out of range.
        public static let outOfRange = Code(.outOfRange)
        /// Not implemented here.
        public static let unimplemented = Code(.unimplemented)
        /// The server failed.
        public static let `internal` = Code(.internal)
        /// Unreachable right now; retrying may help.
        public static let unavailable = Code(.unavailable)
        /// Data was lost.
        public static let dataLoss = Code(.dataLoss)
        /// Not signed in, or the session ended.
        public static let unauthenticated = Code(.unauthenticated)
    }
}
