public import Foundation
internal import Synchronization

/// How a callback handler (``Router/registerCallback(_:handler:)``) answers its call: once,
/// from any thread, with the response message or an error — and how it learns that the call
/// was cancelled (the client reset it, its deadline passed, its connection closed), so it can
/// stop the work it started.
///
/// Thread-safe. The first answer counts; later ones are ignored.
public final class CallResponder: Sendable {
    private struct State {
        var answered = false
        var cancelled = false
        var cancelAction: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    private let deliver: @Sendable (Result<Data, any Error>) -> Void

    /// A responder that hands the answer to `deliver` (the transport, or an async bridge).
    public init(deliver: @escaping @Sendable (Result<Data, any Error>) -> Void) {
        self.deliver = deliver
    }

    /// Answers the call: the response message, or the error it ends with.
    public func respond(_ result: Result<Data, any Error>) {
        let first = state.withLock { state -> Bool in
            defer { state.answered = true; state.cancelAction = nil }
            return !state.answered
        }
        if first { deliver(result) }
    }

    /// Registers what stops the handler's work when the call is cancelled; runs it at once when
    /// the call already is. The handler still answers (with the error its work ended with).
    public func onCancel(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.cancelled { return !state.answered }
            if !state.answered { state.cancelAction = action }
            return false
        }
        if runNow { action() }
    }

    /// Whether the call has been cancelled.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Cancels the call: the registered action runs (once). Transports call this.
    public func cancel() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            defer { state.cancelAction = nil }
            return state.cancelAction
        }
        action?()
    }
}
