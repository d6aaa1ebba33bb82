public import Foundation
internal import Synchronization

/// One call made with ``RPCClient/startUnary(_:request:options:mayRetry:completion:)``: its
/// attempts, one after another, and the handle that cancels it, whichever attempt it is on —
/// one object per call. Thread-safe.
public final class UnaryCallHandle: CallCancellable, UnaryCallObserver {
    private struct State {
        var call: (any ClientCall)?
        var cancelled = false
        /// While a retry waits for its delay: what completes the call if it is cancelled first.
        var waitingRetry: (@Sendable () -> Void)?
        /// The task that waits out the retry's delay: cancelled with the handle, so it lets go
        /// of the call at once.
        var retryTimer: Task<Void, Never>?
    }

    private let state = PortableMutex(State())
    private let client: RPCClient
    private let method: MethodInfo
    private let request: Data
    private let options: CallOptions
    private let mayRetry: @Sendable (RPCError, (any ClientCall)?) -> Bool
    private let completion: @Sendable (Result<Data, RPCError>, (any ClientCall)?) -> Void
    /// The attempt under way (they run one after another).
    private let attempt = PortableAtomic<Int>(0)

    init(
        client: RPCClient, method: MethodInfo, request: Data, options: CallOptions,
        mayRetry: @escaping @Sendable (RPCError, (any ClientCall)?) -> Bool,
        completion: @escaping @Sendable (Result<Data, RPCError>, (any ClientCall)?) -> Void
    ) {
        self.client = client
        self.method = method
        self.request = request
        self.options = options
        self.mayRetry = mayRetry
        self.completion = completion
    }

    /// Cancels the current attempt (its completion reports `CANCELLED`) or, while a retry waits,
    /// completes the call with `CANCELLED` at once; no further attempt starts.
    public func cancel() {
        let (call, waitingRetry, retryTimer) = state.withLock { state in
            state.cancelled = true
            defer {
                state.waitingRetry = nil
                state.retryTimer = nil
            }
            return (state.call, state.waitingRetry, state.retryTimer)
        }
        call?.cancel()
        retryTimer?.cancel()
        waitingRetry?()
    }

    // MARK: Attempts

    /// Starts attempt number `attempt`.
    func start(_ attempt: Int) {
        self.attempt.store(attempt, ordering: .releasing)
        do {
            // Tracked before it starts: a later attempt cannot be overtaken.
            try client.transport.startUnaryCall(
                path: method.path, request: request, options: options, observer: self, prepare: track)
        } catch {
            finish(attempt, .failure(error), nil)
        }
    }

    /// The current attempt ended.
    public func unaryCall(_ call: any ClientCall, endedWith result: Result<Data, RPCError>) {
        finish(attempt.load(ordering: .acquiring), result, call)
    }

    /// Retries after the policy's delay when the attempt may be retried; completes otherwise.
    /// A handle cancelled while the retry waits completes the call at once, and the retry
    /// never starts.
    private func finish(_ attempt: Int, _ result: Result<Data, RPCError>, _ call: (any ClientCall)?) {
        guard case .failure(let error) = result, !client.isClosed,
            let delay = client.retry.retryDelay(
                after: attempt, of: method, failedWith: error, sawResponseHeaders: call?.hasResponseHeaders == true,
                deadline: options.deadline),
            mayRetry(error, call)
        else { return completion(result, call) }
        guard awaitRetry(onCancel: { [self] in completion(.failure(.callCancelled), call) }) else {
            return completion(.failure(.callCancelled), call)
        }
        let key = ObjectIdentifier(self)
        client.waitingRetries.withLock { $0[key] = self }
        if client.isClosed { cancel() }  // closed since the check above: close() may have missed it
        let timer = Task { [self] in
            try? await Task.sleep(for: delay)
            client.waitingRetries.withLock { _ = $0.removeValue(forKey: key) }
            if beginRetry() { start(attempt + 1) }
        }
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled { state.retryTimer = timer }
            return state.cancelled
        }
        if cancelled { timer.cancel() }
    }

    /// Follows a new attempt; cancels it at once when the handle already was.
    private func track(_ call: any ClientCall) {
        let cancelled = state.withLock { state -> Bool in
            state.call = call
            return state.cancelled
        }
        if cancelled { call.cancel() }
    }

    /// Notes that a retry waits; `onCancel` completes the call if the handle is cancelled
    /// before it starts. False when the handle is cancelled already.
    private func awaitRetry(onCancel: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.waitingRetry = onCancel
            return true
        }
    }

    /// Whether the waiting retry may start: false when a cancellation has completed the call.
    private func beginRetry() -> Bool {
        state.withLock { state in
            guard state.waitingRetry != nil else { return false }
            state.waitingRetry = nil
            return true
        }
    }
}
