import RPC
import RPCHTTP2

/// What the gateway adds to every call it makes upstream on behalf of a client (API.md §1
/// and §7): the client's metadata unchanged (authorization, x-api-key, idempotency-key,
/// traceparent, custom keys), the call's `x-request-id` (the client's, or one the gateway
/// made up), and the remaining deadline — or the default deadline when a unary call came
/// without one.
struct ForwardingPolicy: Sendable {
    /// The deadline of unary calls that arrive without one. Streams (watches, imports) keep
    /// only the client's own deadline: they are meant to stay open.
    var defaultTimeout: Duration = .seconds(10)

    /// The options of the upstream call made while serving `context`.
    func options(for context: ServerContext) -> CallOptions {
        // The request id travels beside the metadata, so the client's list is passed on as it
        // is rather than copied to change one entry.
        CallOptions(metadata: context.metadata, deadline: deadline(for: context), requestID: context.requestIDValue)
    }

    /// The options of a call the gateway composes itself (GetHome, GetProductPage): only the
    /// caller's identity, request id and trace context travel, with the remaining deadline.
    func composedOptions(for context: ServerContext) -> CallOptions {
        var options = CallOptions.propagating(from: context)
        options.deadline = deadline(for: context)
        return options
    }

    /// The client's deadline, or the default one for unary calls.
    func deadline(for context: ServerContext) -> ContinuousClock.Instant? {
        if let deadline = context.deadline { return deadline }
        return context.method.kind == .unary ? .now + defaultTimeout : nil
    }
}
