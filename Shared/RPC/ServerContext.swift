public import Logging

/// What a handler knows about its call besides the messages.
///
/// What the transport knows of the call is kept in one immutable object, so passing the
/// context along (to interceptors, handlers, tasks) costs one reference, not a copy of every
/// string and list in it.
public struct ServerContext: Sendable {
    /// The parts of a call fixed when it arrives.
    private final class Call: Sendable {
        let method: MethodInfo
        let metadata: Metadata
        let deadline: ContinuousClock.Instant?
        let requestID: RequestID
        let peer: String
        let contentType: String
        let logger: Logger
        let arrival: ContinuousClock.Instant

        init(
            method: MethodInfo, metadata: Metadata, deadline: ContinuousClock.Instant?, requestID: RequestID,
            peer: String, contentType: String, logger: Logger, arrival: ContinuousClock.Instant
        ) {
            self.method = method
            self.metadata = metadata
            self.deadline = deadline
            self.requestID = requestID
            self.peer = peer
            self.contentType = contentType
            self.logger = logger
            self.arrival = arrival
        }
    }

    private let call: Call
    private var loggerOverride: Logger?

    /// The method being served.
    public var method: MethodInfo { call.method }
    /// The request's custom metadata (protocol headers removed).
    public var metadata: Metadata { call.metadata }
    /// When the caller gives up, from `grpc-timeout`; `nil` for no deadline.
    public var deadline: ContinuousClock.Instant? { call.deadline }
    /// The request id: the caller's `x-request-id`, or one made up for this call.
    public var requestID: String { call.requestID.description }
    /// The request id before it is formatted.
    public var requestIDValue: RequestID { call.requestID }
    /// The remote address, `host:port`.
    public var peer: String { call.peer }
    /// The host part of ``peer``, without the port or an IPv6 address's brackets: what rate
    /// limits count a client by.
    public var peerHost: String { Self.host(ofPeer: call.peer) }
    /// The request's content type, echoed in the response.
    public var contentType: String { call.contentType }
    /// When the call arrived: a default deadline counts from here.
    public var arrival: ContinuousClock.Instant { call.arrival }
    /// A logger carrying the request id; built on first use, since most calls never log.
    public var logger: Logger {
        get {
            var logger = loggerOverride ?? call.logger
            logger[metadataKey: "request-id"] = "\(requestID)"
            return logger
        }
        set { loggerOverride = newValue }
    }
    /// Values attached by interceptors, e.g. the authenticated user.
    public var attributes: Attributes

    /// Creates a context with a request id given as text (tests, in-process calls).
    public init(
        method: MethodInfo, metadata: Metadata, deadline: ContinuousClock.Instant?, requestID: String,
        peer: String, contentType: String = "application/grpc+json", logger: Logger, arrival: ContinuousClock.Instant = .now
    ) {
        self.init(
            method: method, metadata: metadata, deadline: deadline, requestID: RequestID(requestID), peer: peer,
            contentType: contentType, logger: logger, arrival: arrival)
    }

    /// Creates a context; transports call this.
    public init(
        method: MethodInfo, metadata: Metadata, deadline: ContinuousClock.Instant?, requestID: RequestID,
        peer: String, contentType: String = "application/grpc+json", logger: Logger, arrival: ContinuousClock.Instant = .now
    ) {
        call = Call(
            method: method, metadata: metadata, deadline: deadline, requestID: requestID, peer: peer,
            contentType: contentType, logger: logger, arrival: arrival)
        attributes = Attributes()
    }

    /// The time left before the deadline, if there is one.
    public var remainingTime: Duration? {
        deadline.map { $0 - ContinuousClock.now }
    }

    /// The host part of `host:port` or `[v6]:port`; a peer without a port as it is.
    public static func host(ofPeer peer: String) -> String {
        if peer.hasPrefix("["), let close = peer.firstIndex(of: "]") {
            return String(peer[peer.index(after: peer.startIndex)..<close])
        }
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        return String(peer[..<colon])
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
