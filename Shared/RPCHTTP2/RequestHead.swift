internal import RPC

/// The header fields of an outgoing request, kept as their parts rather than as a list: the
/// fixed gRPC fields, the path and authority, the timeout and the caller's metadata, written
/// straight into nghttp2's name/value pairs when the stream opens.
struct RequestHead: Sendable {
    /// `:path`, `/<service>/<method>`.
    let path: String
    /// `:authority`, the target's `host:port`.
    let authority: String
    /// `grpc-timeout`, when the call has a deadline.
    let timeout: String?
    /// The caller's metadata; its custom entries are sent, protocol names are not.
    let metadata: Metadata
    /// `x-request-id`, when given apart from the metadata (``CallOptions/requestID``): it is sent
    /// in place of any `x-request-id` entry of the metadata. Formatted once, as `traceparent` is.
    private let requestID: String?
    /// The call's own span, sent as `traceparent`/`tracestate` in place of the metadata's
    /// (``CallOptions/trace``'s child).
    let trace: TraceContext?
    /// `trace`'s `traceparent`, built once: the fields are walked twice per stream (sizes,
    /// then layout), and the fields made per call are not made again for the second walk.
    private let traceparent: String?

    /// A request's head; `requestID` and `trace`, when given, replace the metadata's own.
    init(
        path: String, authority: String, timeout: String?, metadata: Metadata, requestID: RequestID? = nil,
        trace: TraceContext? = nil
    ) {
        self.path = path
        self.authority = authority
        self.timeout = timeout
        self.metadata = metadata
        self.requestID = requestID?.description
        self.trace = trace
        self.traceparent = trace?.traceparent
    }

    /// Calls `body` with each field, in the order they are sent, and whether HPACK must never
    /// index it (``KnownHeader/isNeverIndexed(_:)``), threading `state` through (an inout
    /// value rather than variables the closure captures, which would be checked for exclusive
    /// access on every use). The fixed fields know their answer; only metadata names are looked up.
    func forEachField<State>(
        _ state: inout State, _ body: (inout State, _ name: String, _ value: String, _ neverIndexed: Bool) -> Void
    ) {
        body(&state, ":method", "POST", false)
        body(&state, ":scheme", "http", false)
        body(&state, ":path", path, false)
        body(&state, ":authority", authority, false)
        body(&state, "content-type", "application/grpc+json", false)
        body(&state, "te", "trailers", false)
        body(&state, "user-agent", "storefront-rpc/1", false)
        if let timeout { body(&state, "grpc-timeout", timeout, true) }
        if let requestID { body(&state, MetadataKey.requestID, requestID, true) }
        if let trace, let traceparent {
            body(&state, MetadataKey.traceparent, traceparent, true)
            if let traceState = trace.traceState { body(&state, MetadataKey.tracestate, traceState, true) }
        }
        for entry in metadata where Metadata.isCustom(entry.name) {
            if requestID != nil && entry.name == MetadataKey.requestID { continue }
            if trace != nil && (entry.name == MetadataKey.traceparent || entry.name == MetadataKey.tracestate) { continue }
            body(&state, entry.name, entry.value, KnownHeader.isNeverIndexed(entry.name))
        }
    }
}
