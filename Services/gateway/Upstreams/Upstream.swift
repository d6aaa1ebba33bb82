import Contracts
import Foundation
import RPC
import ServiceKit
import Synchronization

/// One service behind the gateway: the API services it serves, its clients, and the circuit
/// breaker that answers for it while it is down.
///
/// Unary calls and streams go over connections of their own (``client``, ``streamClient``):
/// a watch holds its stream for as long as it stays open, and an HTTP/2 connection carries at
/// most the service's limit of streams at once (256) — a connection whose streams are all
/// taken queues every further call until one ends. Shared, a crowd of watches would take every
/// slot and the unary calls behind them would wait out their deadlines. Apart, the stream
/// client opens more connections when its own are full (``maxExtraStreamConnections``), so a
/// new watch does not wait for another to end either.
///
/// Every call the gateway makes to a service goes through ``forward(_:options:_:)`` or
/// ``stream(_:options:_:)``, so the breaker sees every outcome. Thread-safe.
final class Upstream: Sendable {
    /// The process name, e.g. `catalog-svc`; used in messages and logs.
    let name: String
    /// The API services it serves, e.g. `shop.catalog.v1.CatalogService`.
    let services: [String]
    /// Whether the gateway is `NOT_SERVING` while this upstream is down.
    let required: Bool
    /// The connections its unary calls go over.
    let client: RPCClient
    /// The connections its streaming calls go over (by default ``client``'s); opened when the
    /// first stream needs one.
    let streamClient: RPCClient
    /// A connection of its own for ``UpstreamHealth``'s checks: on ``client``'s connections a
    /// check would wait for a stream slot behind the calls of a burst (over 256 in flight per
    /// connection) and time out, and a busy upstream would be reported down.
    let healthClient: RPCClient
    /// Refuses calls fast while it is known to be down.
    let breaker: CircuitBreaker
    /// What keeps the replicas of a balanced upstream up to date; nil for one address.
    let replicas: ReplicaMonitor?
    /// The one address of an upstream reached without balancing, for metrics; nil when
    /// balanced (``replicas`` has the addresses) or reached in-process.
    let address: SocketAddressText?
    /// Attempts made again after one failed to reach the upstream (``GatewayMetrics``).
    let retries = RetryCount()
    /// Health checks in a row that went unanswered (``UpstreamHealth``).
    let unansweredChecks = Atomic<Int>(0)
    /// Whether a failed attempt of a task-free unary call may be retried: it counts against the
    /// breaker unless the upstream answered, and retries stop once the breaker opens. One
    /// closure for every call.
    private let mayRetryUnary: @Sendable (RPCError, (any ClientCall)?) -> Bool

    /// An upstream reached through `client`, its streams through `streamClient` and its checks
    /// through `healthClient` (each by default the same client).
    init(
        name: String, services: [String], required: Bool, client: RPCClient, streamClient: RPCClient? = nil,
        healthClient: RPCClient? = nil, breaker: CircuitBreaker = CircuitBreaker(), replicas: ReplicaMonitor? = nil,
        address: SocketAddressText? = nil
    ) {
        self.replicas = replicas
        self.address = address
        self.name = name
        self.services = services
        self.required = required
        self.client = client
        self.streamClient = streamClient ?? client
        self.healthClient = healthClient ?? client
        self.breaker = breaker
        mayRetryUnary = { [breaker, retries] _, attempt in
            if attempt?.serverAnswered != true { breaker.recordFailure() }
            return retries.recordRetry(unless: breaker.isOpen)
        }
    }

    /// Connections the stream client may open beside its own when their streams are all taken
    /// (each carries as many as the service allows, 256 of ours).
    static let maxExtraStreamConnections = 64

    /// Closes its connections (and stops following its replicas); calls in flight fail with
    /// `UNAVAILABLE`.
    func close() async {
        await replicas?.stop()
        await client.close()
        if streamClient !== client { await streamClient.close() }
        if healthClient !== client { await healthClient.close() }
    }

    /// The answer while the upstream cannot be reached.
    var unavailable: RPCError {
        GatewayError.upstreamUnavailable(upstream: name).rpcError
    }

    /// The client whose connections carry calls of `method`: streams apart from unary calls.
    func client(for method: MethodInfo) -> RPCClient {
        method.kind == .unary ? client : streamClient
    }

    /// Runs `body` on a call of `method` whose request messages are all known up front
    /// (unary and server-streaming): idempotent methods are retried on `UNAVAILABLE` before
    /// any response header while the breaker stays closed. Every attempt that cannot reach
    /// the upstream counts against the breaker, so a dead upstream opens it within one call.
    func forward<Result: Sendable>(
        _ method: MethodInfo, options: CallOptions, _ body: (any ClientCall) async throws -> Result
    ) async throws -> Result {
        try await guarded { attempt in
            try await client(for: method).withRetries(method, options: options, mayRetry: { [breaker, retries] _ in
                if !attempt.answered { breaker.recordFailure() }
                attempt.answered = false
                return retries.recordRetry(unless: breaker.isOpen)
            }) { call in
                defer { if call.serverAnswered { attempt.answered = true } }
                return try await body(call)
            }
        }
    }

    /// ``forward(_:options:_:)`` for a unary call, without a task: sends `request` and answers
    /// `responder` with the upstream's response or error, under the same breaker and retry
    /// rules; cancelling the responder cancels the upstream call.
    func forwardUnary(_ method: MethodInfo, request: Data, options: CallOptions, responder: CallResponder) {
        let admittedAt = breaker.openCount
        guard breaker.admit() != .reject else { return responder.respond(.failure(unavailable)) }
        let handle = client.startUnary(
            method, request: request, options: options, mayRetry: mayRetryUnary,
            completion: { [self] result, attempt in
                let answered = attempt?.serverAnswered == true
                switch result {
                case .success(let response):
                    breaker.recordSuccess()
                    responder.respond(.success(response))
                case .failure(let error):
                    responder.respond(.failure(settle(error, answered: answered, admittedAt: admittedAt)))
                }
            })
        responder.onCancel(cancelling: handle)
    }

    /// Runs `body` on one call of `method` whose request messages stream from the client
    /// (client-streaming, bidirectional): never retried, since the messages are consumed.
    func stream<Result: Sendable>(
        _ method: MethodInfo, options: CallOptions, _ body: (any ClientCall) async throws -> Result
    ) async throws -> Result {
        try await guarded { attempt in
            try await streamClient.withCall(path: method.path, options: options) { call in
                defer { if call.serverAnswered { attempt.answered = true } }
                return try await body(call)
            }
        }
    }

    /// Tells the breaker how a failed call (admitted at `admittedAt`, see
    /// ``CircuitBreaker/recordSuccess(admittedAt:)``) went and returns what the client is
    /// answered: an answer of any status is success; `UNAVAILABLE` without one is a failure to reach the
    /// upstream, answered as `UPSTREAM_UNAVAILABLE`; anything else (a deadline, a
    /// cancellation) leaves the breaker's count alone.
    private func settle(_ error: RPCError, answered: Bool, admittedAt: Int) -> RPCError {
        if answered {
            breaker.recordSuccess(admittedAt: admittedAt)
            return error
        }
        guard error.code == .unavailable else {
            breaker.recordAbandoned()
            return error
        }
        breaker.recordFailure()
        return unavailable
    }

    /// Whether the upstream answered the current attempt of a call. A reference, so the
    /// closures of one call (its body and its retry check) share it; never leaves the call.
    private final class Attempt {
        var answered = false
    }

    /// Admits the call through the breaker, runs it, and tells the breaker how it went: an
    /// answer of any status is success; `UNAVAILABLE` without one is a failure to reach the
    /// upstream, answered as `UPSTREAM_UNAVAILABLE`.
    private func guarded<Result: Sendable>(_ run: (Attempt) async throws -> Result) async throws -> Result {
        let admittedAt = breaker.openCount
        guard breaker.admit() != .reject else { throw unavailable }
        let attempt = Attempt()
        do {
            let result = try await run(attempt)
            breaker.recordSuccess()
            return result
        } catch let error as RPCError {
            throw settle(error, answered: attempt.answered, admittedAt: admittedAt)
        } catch {
            if attempt.answered { breaker.recordSuccess(admittedAt: admittedAt) } else { breaker.recordAbandoned() }
            throw error
        }
    }
}

/// The retries of one upstream's calls, counted where the gateway agrees to each (its retry
/// checks): shared by those closures, hence a reference. Thread-safe.
final class RetryCount: Sendable {
    private let value = Atomic<Int>(0)

    /// Agrees to a retry and counts it, unless `refused` (the breaker opened); returns whether
    /// the retry may go.
    func recordRetry(unless refused: Bool) -> Bool {
        guard !refused else { return false }
        value.add(1, ordering: .relaxed)
        return true
    }

    /// The retries agreed to so far.
    var count: Int { value.load(ordering: .relaxed) }
}
