public import Foundation
public import RPC
import RPCHTTP2
import Synchronization

/// A ``WebResponse`` that records what a ``WebHandler`` answered, for tests of the web edge
/// without a socket: the status, headers and body (a streamed body's parts joined), whether
/// it ended, and the call it noted for its log line.
public final class CapturedWebResponse: WebResponse {
    public struct State: Sendable {
        public var status: Int?
        public var headers = WebHeaders()
        public var body = Data()
        /// Each part written to a streamed body.
        public var parts: [Data] = []
        public var streamed = false
        public var ended = false
        public var cancelled = false
        public var notedPath: String?
        public var notedStatus: RPCError?
        public var notedRequestID: RequestID?
        /// Deadlines set (``setDeadline(_:_:)``), in order.
        public var deadlines: [ContinuousClock.Instant] = []
    }

    private let state = Mutex(State())
    private let cancelActions = Mutex<[@Sendable () -> Void]>([])

    public init() {}

    /// What was answered so far.
    public var captured: State { state.withLock { $0 } }

    public func send(status: Int, headers: WebHeaders, body: Data) {
        state.withLock { state in
            guard state.status == nil else { return }
            state.status = status
            state.headers = headers
            state.body = body
            state.ended = true
        }
    }

    public func start(status: Int, headers: WebHeaders) {
        state.withLock { state in
            guard state.status == nil else { return }
            state.status = status
            state.headers = headers
            state.streamed = true
        }
    }

    public func write(_ bytes: Data) async throws {
        try state.withLock { state in
            if state.cancelled { throw CancellationError() }
            state.body.append(bytes)
            state.parts.append(bytes)
        }
    }

    public func end() {
        state.withLock { $0.ended = true }
    }

    public func onCancel(_ action: @escaping @Sendable () -> Void) {
        if isCancelled { return action() }
        cancelActions.withLock { $0.append(action) }
    }

    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Runs `action` at `deadline` unless the response has ended or was cancelled by then, as
    /// the transports' loop timers do (here a task, which a test's few calls can afford).
    public func setDeadline(_ deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.deadlines.append(deadline) }
        Task { [self] in
            while ContinuousClock.now < deadline, !state.withLock({ $0.ended || $0.cancelled }) {
                try? await Task.sleep(for: min(.milliseconds(5), deadline - .now))
            }
            if !state.withLock({ $0.ended || $0.cancelled }) { action() }
        }
    }

    /// What the transport does when the client goes away.
    public func cancel() {
        state.withLock { $0.cancelled = true }
        for action in cancelActions.withLock({ actions in defer { actions = [] }; return actions }) { action() }
    }

    public func noteCall(path: String, status: RPCError?, requestID: RequestID?) {
        state.withLock {
            $0.notedPath = path
            $0.notedStatus = status
            $0.notedRequestID = requestID
        }
    }

    /// Waits (up to `limit`) until the response has ended; returns what was captured.
    public func ended(within limit: Duration = .seconds(10)) async -> State {
        let deadline = ContinuousClock.now + limit
        while !state.withLock({ $0.ended }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(2))
        }
        return captured
    }
}
