public import Logging

/// The fields of a call's one log line (request id, method, status, duration, peer, and the
/// optional ones), as the server has them: written straight by a handler that knows the line
/// (``CallLineLogging``), or as swift-log metadata by any other.
public struct CallLogLine: Sendable, Equatable {
    public var requestID: String
    public var method: String
    public var status: String
    public var reason: String?
    public var durationMilliseconds: String
    public var peer: String
    public var httpStatus: Int?
    public var handlerStatus: String?
    public var cause: String?

    public init(
        requestID: String, method: String, status: String, reason: String? = nil, durationMilliseconds: String, peer: String,
        httpStatus: Int? = nil, handlerStatus: String? = nil, cause: String? = nil
    ) {
        self.requestID = requestID
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
    /// a line lists metadata in.
    public func forEachField(_ body: (_ name: String, _ value: String) -> Void) {
        if let cause { body("cause", cause) }
        body("duration-ms", durationMilliseconds)
        if let handlerStatus { body("handler-status", handlerStatus) }
        if let httpStatus { body("http-status", String(httpStatus)) }
        body("method", method)
        body("peer", peer)
        if let reason { body("reason", reason) }
        body("request-id", requestID)
        body("status", status)
    }
}

/// A log handler that writes call lines itself, from their fields: without a metadata
/// dictionary built, hashed and sorted for every call (the servers' logs at info have a line
/// per call). It must write what it would write for ``CallLogLine/metadata``.
public protocol CallLineLogging: LogHandler {
    /// Writes `line` at `level` (already checked against the handler's level).
    func logCall(_ line: CallLogLine, level: Logger.Level)
}
