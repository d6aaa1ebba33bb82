public import Logging

/// What a handler knows about its call besides the messages.
public struct ServerContext: Sendable {
    /// The method being served.
    public let method: MethodInfo
    /// The request's custom metadata (protocol headers removed).
    public let metadata: Metadata
    /// When the caller gives up, from `grpc-timeout`; `nil` for no deadline.
    public let deadline: ContinuousClock.Instant?
    /// The request id: the caller's `x-request-id`, or one made up for this call.
    public var requestID: String { requestIDValue.description }
    /// The request id before it is formatted.
    public let requestIDValue: RequestID
    /// The remote address, `host:port`.
    public let peer: String
    /// The request's content type, echoed in the response.
    public let contentType: String
    /// A logger carrying the request id; built on first use, since most calls never log.
    public var logger: Logger {
        get {
            var logger = baseLogger
            logger[metadataKey: "request-id"] = "\(requestID)"
            return logger
        }
        set { baseLogger = newValue }
    }
    private var baseLogger: Logger
    /// Values attached by interceptors, e.g. the authenticated user.
    public var attributes: Attributes

    /// Creates a context with a request id given as text (tests, in-process calls).
    public init(
        method: MethodInfo, metadata: Metadata, deadline: ContinuousClock.Instant?, requestID: String,
        peer: String, contentType: String = "application/grpc+json", logger: Logger
    ) {
        self.init(
            method: method, metadata: metadata, deadline: deadline, requestID: RequestID(requestID), peer: peer,
            contentType: contentType, logger: logger)
    }

    /// Creates a context; transports call this.
    public init(
        method: MethodInfo, metadata: Metadata, deadline: ContinuousClock.Instant?, requestID: RequestID,
        peer: String, contentType: String = "application/grpc+json", logger: Logger
    ) {
        self.method = method
        self.metadata = metadata
        self.deadline = deadline
        self.requestIDValue = requestID
        self.peer = peer
        self.contentType = contentType
        self.baseLogger = logger
        self.attributes = Attributes()
    }

    /// The time left before the deadline, if there is one.
    public var remainingTime: Duration? {
        deadline.map { $0 - ContinuousClock.now }
    }
}

/// A small typed bag of values that interceptors attach to a context.
public struct Attributes: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// An empty bag.
    public init() {}

    /// The value stored for `key`, if any.
    public subscript<Key: AttributeKey>(key: Key.Type) -> Key.Value? {
        get { values[ObjectIdentifier(key)] as? Key.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }
}

/// A key for ``Attributes``: a type whose `Value` is what it stores.
public protocol AttributeKey {
    /// The stored type.
    associatedtype Value: Sendable
}
