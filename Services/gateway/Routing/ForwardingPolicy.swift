import RPC

/// What the gateway adds to every call it makes upstream on behalf of a client (API.md §1
/// and §7): the client's metadata unchanged (authorization, x-api-key, idempotency-key,
/// traceparent, custom keys), the call's `x-request-id` (the client's, or one the gateway
/// made up), and the remaining deadline — or the default deadline when a unary call came
/// without one. To a service that counts clients by address (``vouchingForClients(with:)``)
/// it also names the client's address.
struct ForwardingPolicy: Sendable {
    /// The deadline of unary calls that arrive without one. Streams (watches, imports) keep
    /// only the client's own deadline: they are meant to stay open.
    var defaultTimeout: Duration = .seconds(10)
    /// The internal key, when the upstream counts clients by address (auth-svc's sign-up and
    /// email limits, its sign-in throttling): every call then carries the client's host in
    /// `x-forwarded-for` and this key in `x-api-key`, the proof that the gateway named the
    /// address — both in place of whatever the client sent, so no client can pass for another.
    /// Without it the upstream would see every client as the gateway's one address.
    var clientAddressKey: String?

    /// This policy for an upstream that counts clients by address and accepts `internalKey`
    /// as proof of an `x-forwarded-for` (one without admin methods: their key would be replaced).
    func vouchingForClients(with internalKey: String) -> ForwardingPolicy {
        var policy = self
        policy.clientAddressKey = internalKey
        return policy
    }

    /// The options of the upstream call made while serving `context`.
    func options(for context: ServerContext) -> CallOptions {
        // The request id travels beside the metadata, so the client's list is passed on as it
        // is rather than copied to change one entry.
        // The call is a child of the gateway's span: its traceparent replaces the client's.
        var options = CallOptions(metadata: metadata(for: context), deadline: deadline(for: context), requestID: context.requestIDValue)
        options.trace = context.trace
        return options
    }

    /// The client's metadata, with its address and the key vouching for it when the upstream
    /// counts clients by address.
    private func metadata(for context: ServerContext) -> Metadata {
        guard let clientAddressKey else { return context.metadata }
        var metadata = context.metadata
        metadata.set(MetadataKey.apiKey, clientAddressKey)
        metadata.set(MetadataKey.forwardedFor, context.peerHost)
        return metadata
    }

    /// The options of a call the gateway composes itself (GetHome, GetProductPage): only the
    /// caller's identity, request id and trace context travel, with the remaining deadline.
    func composedOptions(for context: ServerContext) -> CallOptions {
        var options = CallOptions.propagating(from: context)
        options.deadline = deadline(for: context)
        return options
    }

    /// The client's deadline, or for unary calls the default one, counted from the call's arrival.
    func deadline(for context: ServerContext) -> ContinuousClock.Instant? {
        if let deadline = context.deadline { return deadline }
        return context.method.kind == .unary ? context.arrival + defaultTimeout : nil
    }
}
