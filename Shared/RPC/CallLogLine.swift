public import Logging

/// The fields of a call's one log line (request id, method, status, duration, peer, and the
/// optional ones), as the server has them: written straight by a handler that knows the line
/// (``CallLineLogging``), or as swift-log metadata by any other.
///
/// Most fields hold what a client chose (the method path of an unknown method, a cause that
/// quotes its input, the note of a refused request id): every field is given to a writer
/// bounded to ``maxFieldBytes`` (``bounded(_:limit:)``), so no client makes a line long.
public struct CallLogLine: Sendable, Equatable {
    public var requestID: String
    /// What the client sent as `x-request-id` when it was refused and replaced by
    /// ``requestID`` (``RequestID/clientNote``): its first bytes and length, bounded.
    public var clientRequestID: String?
    public var method: String
    public var status: String
    public var reason: String?
    public var durationMilliseconds: String
    public var peer: String
    public var httpStatus: Int?
    public var handlerStatus: String?
    public var cause: String?
    /// The call's trace (32 hexadecimal digits), so one shopper's calls across every process
    /// can be found with `grep`.
    public var traceID: String?
    /// The call's span in this process (16 hexadecimal digits): the parent of the spans of the
    /// calls it made upstream.
    public var spanID: String?

    public init(
        requestID: String, method: String, status: String, reason: String? = nil, durationMilliseconds: String, peer: String,
        httpStatus: Int? = nil, handlerStatus: String? = nil, cause: String? = nil, clientRequestID: String? = nil,
        trace: TraceContext? = nil
    ) {
        self.traceID = trace?.traceIDText
        self.spanID = trace?.spanIDText
        self.requestID = requestID
        self.clientRequestID = clientRequestID
        self.method = method
        self.status = status
        self.reason = reason
        self.durationMilliseconds = durationMilliseconds
        self.peer = peer
        self.httpStatus = httpStatus
        self.handlerStatus = handlerStatus
        self.cause = cause
    }

    /// The message of every call line.
    public static let message: Logger.Message = "call"

    /// The fields as swift-log metadata, under the names of the line.
    public var metadata: Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        forEachField { name, value in metadata[name] = .string(value) }
        return metadata
    }

    /// Calls `body` with each field that is set, by name in the order of the names — the order
    /// a line lists metadata in — each bounded to ``maxFieldBytes``.
    public func forEachField(_ body: (_ name: String, _ value: String) -> Void) {
        if let cause { body("cause", Self.bounded(cause)) }
        if let clientRequestID { body("client-request-id", Self.bounded(clientRequestID)) }
        body("duration-ms", durationMilliseconds)
        if let handlerStatus { body("handler-status", Self.bounded(handlerStatus)) }
        if let httpStatus { body("http-status", String(httpStatus)) }
        body("method", Self.bounded(method))
        body("peer", Self.bounded(peer))
        if let reason { body("reason", Self.bounded(reason)) }
        body("request-id", Self.bounded(requestID))
        if let spanID { body("span-id", spanID) }
        body("status", Self.bounded(status))
        if let traceID { body("trace-id", traceID) }
    }

    /// The most bytes of a field's value a line carries; longer values are cut
    /// (``bounded(_:limit:)``).
    public static let maxFieldBytes = 256

    /// `value` when it has at most `limit` UTF-8 bytes; else its first bytes (cut between
    /// characters) then a mark with the whole length, `...[15360B]`, `limit` bytes in all.
    public static func bounded(_ value: String, limit: Int = maxFieldBytes) -> String {
        let bytes = value.utf8
        guard bytes.count > limit else { return value }
        let mark = truncationMark(length: bytes.count)
        var end = bytes.index(bytes.startIndex, offsetBy: max(0, limit - mark.utf8.count))
        // Back to the start of a character: a UTF-8 continuation byte is 0b10xxxxxx.
        while end > bytes.startIndex, bytes[end] & 0xC0 == 0x80 { end = bytes.index(before: end) }
        return String(decoding: bytes[..<end], as: UTF8.self) + mark
    }

    /// What ends a value cut short: `...` and the value's whole length in bytes, `...[15360B]`.
    public static func truncationMark(length: Int) -> String { "...[\(length)B]" }

    // MARK: Refusals

    /// The reasons of calls refused before they were served — by a limit, a throttle or the
    /// protocol — whose lines a writer may sample (``refusal``): a flood of them would
    /// otherwise write a line each, tens of thousands a second. Answers of the application
    /// (successes, and failures the handler decided) are never among them.
    public static let refusalReasons: Set<String> = [
        "RATE_LIMITED", "SERVER_BUSY", "OVERLOADED", "TOO_MANY_WATCHES", "TOO_MANY_ATTEMPTS", "HEADER_LIST_TOO_LARGE",
        "UNKNOWN_METHOD", "UNSUPPORTED_ENCODING", "UNSUPPORTED_CODEC", "INVALID_TIMEOUT", "MALFORMED_MESSAGE",
        "MISSING_TOKEN", "INVALID_ACCESS_TOKEN", "MISSING_API_KEY", "INVALID_API_KEY",
    ]

    /// Why the call was refused before it was served — its reason when that is one of
    /// ``refusalReasons``, `HTTP-415` for a request refused at the HTTP level — or nil for a
    /// call the application answered.
    public var refusal: String? {
        if let httpStatus { return "HTTP-\(httpStatus)" }
        if let reason, Self.refusalReasons.contains(reason) { return reason }
        return nil
    }
}

/// A log handler that writes call lines itself, from their fields: without a metadata
/// dictionary built, hashed and sorted for every call (the servers' logs at info have a line
/// per call). It must write what it would write for ``CallLogLine/metadata``.
public protocol CallLineLogging: LogHandler {
    /// Writes `line` at `level` (already checked against the handler's level).
    func logCall(_ line: CallLogLine, level: Logger.Level)
}
