/// Per-call options: metadata, deadline, request id.
public struct CallOptions: Sendable {
    /// Custom metadata to send (authorization, request id, traceparent…).
    public var metadata: Metadata
    /// When the call gives up; becomes `grpc-timeout`.
    public var deadline: ContinuousClock.Instant?
    /// The request id to send as `x-request-id`, in place of any `x-request-id` in `metadata`:
    /// a call made while serving another passes its id on this way without copying the
    /// caller's metadata to change one entry.
    public var requestID: RequestID?
    /// The span of the call being served when this one is made: the call is its child, sent
    /// as `traceparent` (and `tracestate`) in place of any such entry of `metadata`. Nil sends
    /// the metadata's own, if any.
    public var trace: TraceContext?

    /// Options with metadata and an optional timeout from now.
    public init(metadata: Metadata = Metadata(), timeout: Duration? = nil) {
        self.metadata = metadata
        self.deadline = timeout.map { ContinuousClock.now + $0 }
    }

    /// Options with an absolute deadline and, if given, the request id to send.
    public init(metadata: Metadata = Metadata(), deadline: ContinuousClock.Instant?, requestID: RequestID? = nil) {
        self.metadata = metadata
        self.deadline = deadline
        self.requestID = requestID
    }

    /// Options for a call made while serving `context`: the request id and authorization are
    /// propagated, the call is a child of the served call's span, and the remaining deadline
    /// carries over.
    public static func propagating(from context: ServerContext, extra: Metadata = Metadata()) -> CallOptions {
        var metadata = Metadata()
        if let value = context.metadata[MetadataKey.authorization] { metadata.set(MetadataKey.authorization, value) }
        for entry in extra { metadata.set(entry.name, entry.value) }
        var options = CallOptions(metadata: metadata, deadline: context.deadline, requestID: context.requestIDValue)
        options.trace = context.trace
        return options
    }
}
