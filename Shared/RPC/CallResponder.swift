public import Foundation
internal import Synchronization

/// How a callback handler (``Router/registerCallback(_:handler:)``) answers its call: once,
/// from any thread, with the response message or an error — and how it learns that the call
/// was cancelled (the client reset it, its deadline passed, its connection closed), so it can
/// stop the work it started.
///
/// Thread-safe. The first answer counts; later ones are ignored.
public final class CallResponder: Sendable {
    /// Where the answer goes.
    private enum Delivery: Sendable {
        case closure(@Sendable (Result<Data, any Error>) -> Void)
        case receiver(any CallAnswerReceiver)
    }

    /// What stops the handler's work when the call is cancelled.
    private enum CancelAction: Sendable {
        case closure(@Sendable () -> Void)
        case object(any CallCancellable)

        func run() {
            switch self {
            case .closure(let action): action()
            case .object(let target): target.cancel()
            }
        }
    }

    private struct State {
        var answered = false
        var cancelled = false
        var cancelAction: CancelAction?
    }

    private let state = PortableMutex(State())
    private let delivery: Delivery

    /// A responder that hands the answer to `deliver` (the transport, or an async bridge).
    public init(deliver: @escaping @Sendable (Result<Data, any Error>) -> Void) {
        delivery = .closure(deliver)
    }

    /// A responder that hands the answer to `receiver` (a transport's stream: no closure to
    /// allocate per call).
    public init(receiver: any CallAnswerReceiver) {
        delivery = .receiver(receiver)
    }

    /// Answers the call: the response message, or the error it ends with.
    public func respond(_ result: Result<Data, any Error>) {
        let first = state.withLock { state -> Bool in
            defer { state.answered = true; state.cancelAction = nil }
            return !state.answered
        }
        guard first else { return }
        switch delivery {
        case .closure(let deliver): deliver(result)
        case .receiver(let receiver): receiver.receiveAnswer(result)
        }
    }

    /// Registers what stops the handler's work when the call is cancelled; runs it at once when
    /// the call already is. The handler still answers (with the error its work ended with).
    public func onCancel(_ action: @escaping @Sendable () -> Void) {
        register(.closure(action))
    }

    /// Registers an object to cancel when the call is cancelled (an upstream call's handle: no
    /// closure to allocate per call); cancels it at once when the call already is.
    public func onCancel(cancelling target: any CallCancellable) {
        register(.object(target))
    }

    private func register(_ action: CancelAction) {
        let runNow = state.withLock { state -> Bool in
            if state.cancelled { return !state.answered }
            if !state.answered { state.cancelAction = action }
            return false
        }
        if runNow { action.run() }
    }

    /// Whether the call has been cancelled.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Cancels the call: the registered action runs (once). Transports call this.
    public func cancel() {
        let action = state.withLock { state -> CancelAction? in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            defer { state.cancelAction = nil }
            return state.cancelAction
        }
        action?.run()
    }
}

/// What a ``CallResponder`` hands its answer to, as an object rather than a closure.
public protocol CallAnswerReceiver: AnyObject, Sendable {
    /// The call's answer: the response message, or the error it ends with. Called once, on
    /// whatever thread answered.
    func receiveAnswer(_ result: Result<Data, any Error>)
}

/// Work a ``CallResponder`` can stop when its call is cancelled, as an object rather than a
/// closure.
public protocol CallCancellable: AnyObject, Sendable {
    /// Stops the work; called at most once per registration, on whatever thread cancelled.
    func cancel()
}
