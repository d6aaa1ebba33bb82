import Foundation
import RPC

extension Router {
    /// Registers `method` to be served by `upstream`, unchanged in path and messages: the
    /// request bytes go up as they came and the responses come back as they are, with the
    /// upstream's status, reason and details. Streams pass through message by message, so
    /// backpressure holds end to end: the gateway reads from one side only as fast as the
    /// other side takes. Streams the server keeps open (watches) are held to `watches`' cap
    /// per user, when given; the gateway always gives one.
    mutating func proxy(_ method: MethodInfo, to upstream: Upstream, policy: ForwardingPolicy, watches: WatchLimiter? = nil) {
        switch method.kind {
        case .unary:
            // Forwarded without a task: the request goes up from the loop that received it and
            // the answer comes back from the upstream connection's callback.
            registerCallback(method) { request, context, responder in
                upstream.forwardUnary(method, request: request, options: policy.options(for: context), responder: responder)
            }
        case .serverStreaming:
            register(method) { io, context in
                try await Self.holding(watches, for: context) {
                    let request = try await Router.singleRawRequest(from: io)
                    try await upstream.forward(method, options: policy.options(for: context)) { call in
                        try await call.send(request)
                        call.finishSending()
                        // Retries stop at the first response header; nothing reaches the client before it.
                        try await Self.relayResponses(from: call, to: io, of: upstream)
                    }
                }
            }
        case .clientStreaming:
            register(method) { io, context in
                try await upstream.stream(method, options: policy.options(for: context)) { call in
                    try await Self.relayRequests(from: io, to: call)
                    try await Self.relayResponses(from: call, to: io, of: upstream)
                }
            }
        case .bidirectionalStreaming:
            register(method) { io, context in
                try await Self.holding(watches, for: context) {
                    try await upstream.stream(method, options: policy.options(for: context)) { call in
                        // Not a child task: a read of the client's next message cannot be cancelled,
                        // so a task group would hold the upstream's status back until the client
                        // half-closed. Ending this handler ends the server stream, which ends that read.
                        let requests = Task { try await Self.relayRequests(from: io, to: call) }
                        defer { requests.cancel() }
                        try await Self.relayResponses(from: call, to: io, of: upstream)
                    }
                }
            }
        }
    }

    /// Runs `body` holding one of the caller's watch places when there is a cap.
    private static func holding(
        _ watches: WatchLimiter?, for context: ServerContext, _ body: () async throws -> Void
    ) async throws {
        guard let watches else { return try await body() }
        try await watches.holding(for: context, body)
    }

    /// Sends the client's messages upstream as they arrive, then half-closes.
    private static func relayRequests(from io: any ServerCallIO, to call: any ClientCall) async throws {
        while let message = try await io.nextMessage() {
            try await call.send(message)
        }
        call.finishSending()
    }

    /// Writes the upstream's messages to the client until its status; a failed status is thrown.
    /// The upstream's response headers tell its breaker it answered: a half-open breaker whose
    /// probe is a watch closes then, not when the watch ends (other calls wait on the probe).
    private static func relayResponses(from call: any ClientCall, to io: any ServerCallIO, of upstream: Upstream) async throws {
        _ = try await call.responseHeaders()
        upstream.breaker.recordSuccess()
        while let message = try await call.nextMessage() {
            try await io.write(message)
        }
    }
}
