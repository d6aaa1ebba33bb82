import Foundation
import RPC
import Synchronization
import Testing

// `CallResponder` on its own. The helpers here serve RouterCallbackTests.swift too.

/// What a responder delivered, and how often its cancel action ran. Thread-safe.
final class ResponderLog: Sendable {
    private let state = Mutex<(deliveries: [Result<Data, any Error>], cancelRuns: Int)>(([], 0))

    func delivered(_ result: Result<Data, any Error>) { state.withLock { $0.deliveries.append(result) } }
    func cancelRan() { state.withLock { $0.cancelRuns += 1 } }

    var deliveries: [Result<Data, any Error>] { state.withLock { $0.deliveries } }
    var cancelRuns: Int { state.withLock { $0.cancelRuns } }

    /// The delivered messages (failures as nil).
    var messages: [Data?] { deliveries.map { try? $0.get() } }

    /// A responder that records here.
    func responder() -> CallResponder { CallResponder { self.delivered($0) } }
}

/// A receiver object that records into a log (the transport's way: no closure per call).
final class RecordingReceiver: CallAnswerReceiver {
    let log = ResponderLog()
    func receiveAnswer(_ result: Result<Data, any Error>) { log.delivered(result) }
}

/// An object to cancel (like an upstream call's handle) that counts into a log.
final class CountingCancellable: CallCancellable {
    let log: ResponderLog
    init(_ log: ResponderLog) { self.log = log }
    func cancel() { log.cancelRan() }
}

/// A value behind a lock, shareable with escaping closures.
final class Locked<Value: Sendable>: Sendable {
    private let state: Mutex<Value>
    init(_ value: Value) { state = Mutex(value) }
    var value: Value {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}

/// A plain Swift error, not an `RPCError`.
struct WorkFailure: Error, Equatable {}

@Suite("CallResponder")
struct CallResponderTests {
    private static let first = Data("first".utf8)
    private static let second = Data("second".utf8)

    @Test("the first answer is delivered and every later one ignored, whatever their kinds")
    func firstAnswerWins() throws {
        let log = ResponderLog()
        let responder = log.responder()
        #expect(log.deliveries.isEmpty)  // nothing until an answer
        responder.respond(.success(Self.first))
        responder.respond(.success(Self.second))
        responder.respond(.failure(WorkFailure()))
        #expect(log.messages == [Self.first])

        let failing = ResponderLog()
        let other = failing.responder()
        other.respond(.failure(RPCError(code: .notFound, reason: "GONE", message: "gone")))
        other.respond(.success(Self.first))
        #expect(failing.deliveries.count == 1)
        let error = try #require(failing.deliveries.first.flatMap { result -> RPCError? in
            if case .failure(let error) = result { return error as? RPCError }
            return nil
        })
        #expect(error.code == .notFound)
        #expect(error.reason == "GONE")
    }

    @Test("an action registered before the call is cancelled runs on cancel, exactly once")
    func onCancelThenCancel() {
        let log = ResponderLog()
        let responder = log.responder()
        responder.onCancel { log.cancelRan() }
        #expect(log.cancelRuns == 0)
        #expect(!responder.isCancelled)
        responder.cancel()
        #expect(log.cancelRuns == 1)
        #expect(responder.isCancelled)
        responder.cancel()
        responder.cancel()
        #expect(log.cancelRuns == 1)
        #expect(log.deliveries.isEmpty)  // cancelling answers nothing: the handler still does
    }

    @Test("an action registered after the call was cancelled runs at once, before onCancel returns")
    func cancelThenOnCancel() {
        let log = ResponderLog()
        let responder = log.responder()
        responder.cancel()
        #expect(responder.isCancelled)
        responder.onCancel { log.cancelRan() }
        #expect(log.cancelRuns == 1)
        responder.cancel()  // already cancelled: the action does not run again
        #expect(log.cancelRuns == 1)
    }

    @Test("an object registered to cancel is cancelled on cancel exactly once, at once when the call already was, never after an answer")
    func cancellingAnObject() {
        let log = ResponderLog()
        let responder = log.responder()
        responder.onCancel(cancelling: CountingCancellable(log))
        #expect(log.cancelRuns == 0)
        responder.cancel()
        responder.cancel()
        #expect(log.cancelRuns == 1)

        let late = ResponderLog()
        let cancelled = late.responder()
        cancelled.cancel()
        cancelled.onCancel(cancelling: CountingCancellable(late))
        #expect(late.cancelRuns == 1)  // before onCancel returned

        let answeredLog = ResponderLog()
        let answered = answeredLog.responder()
        answered.onCancel(cancelling: CountingCancellable(answeredLog))
        answered.respond(.success(Self.first))
        answered.cancel()
        answered.onCancel(cancelling: CountingCancellable(answeredLog))
        #expect(answeredLog.cancelRuns == 0)
        #expect(answeredLog.messages == [Self.first])
    }

    @Test("an action never runs once the call is answered, whether registered before or after the answer")
    func noCancelActionAfterAnswer() {
        let before = ResponderLog()
        let answered = before.responder()
        answered.onCancel { before.cancelRan() }
        answered.respond(.success(Self.first))
        answered.cancel()
        #expect(before.cancelRuns == 0)
        #expect(answered.isCancelled)  // the flag is set; only the action is skipped

        let after = ResponderLog()
        let late = after.responder()
        late.respond(.success(Self.first))
        late.cancel()
        late.onCancel { after.cancelRan() }
        #expect(after.cancelRuns == 0)
        #expect(after.messages == [Self.first])
    }

    @Test("cancelling twice runs the action once, and a cancelled handler may still answer, once")
    func cancelTwiceThenAnswer() {
        let log = ResponderLog()
        let responder = log.responder()
        responder.onCancel { log.cancelRan() }
        responder.cancel()
        responder.cancel()
        #expect(log.cancelRuns == 1)
        responder.respond(.failure(CancellationError()))
        responder.respond(.success(Self.first))
        #expect(log.deliveries.count == 1)
        #expect(log.messages == [nil])
    }

    @Test("the cancel action may answer the call from inside itself without deadlocking")
    func answerFromInsideTheCancelAction() {
        for registerFirst in [true, false] {
            let log = ResponderLog()
            let responder = log.responder()
            let action: @Sendable () -> Void = {
                log.cancelRan()
                responder.respond(.failure(CancellationError()))
                responder.onCancel { log.cancelRan() }  // answered by now: never runs
            }
            if registerFirst {
                responder.onCancel(action)
                responder.cancel()
            } else {
                responder.cancel()
                responder.onCancel(action)
            }
            #expect(log.cancelRuns == 1)
            #expect(log.deliveries.count == 1)
            #expect(log.messages == [nil])
        }
    }

    @Test("the deliver closure may cancel its own responder (a transport tearing down) without deadlocking")
    func deliverMayCancel() {
        let log = ResponderLog()
        let box = Locked<CallResponder?>(nil)
        let responder = CallResponder { result in
            log.delivered(result)
            box.value?.cancel()
        }
        box.value = responder
        responder.onCancel { log.cancelRan() }
        responder.respond(.success(Self.first))
        #expect(log.messages == [Self.first])
        #expect(log.cancelRuns == 0)  // answered first: the action was dropped
        #expect(responder.isCancelled)
    }

    @Test("many threads answering and cancelling at once: one delivery, at most one cancel action", arguments: [true, false])
    func concurrentAnswersAndCancels(registerAction: Bool) {
        let count = 500
        let logs = (0..<count).map { _ in ResponderLog() }
        let responders = logs.map { $0.responder() }
        if registerAction {
            for (log, responder) in zip(logs, responders) { responder.onCancel { log.cancelRan() } }
        }
        // Eight racers per responder: four answer (two with messages, two with errors), four cancel.
        DispatchQueue.concurrentPerform(iterations: count * 8) { index in
            let responder = responders[index / 8]
            switch index % 8 {
            case 0, 1: responder.respond(.success(Data("answer \(index % 8)".utf8)))
            case 2, 3: responder.respond(.failure(WorkFailure()))
            default: responder.cancel()
            }
        }
        for (index, log) in logs.enumerated() {
            #expect(log.deliveries.count == 1, "responder \(index) delivered \(log.deliveries.count) times")
            #expect(log.cancelRuns <= (registerAction ? 1 : 0), "responder \(index) ran its action \(log.cancelRuns) times")
            #expect(responders[index].isCancelled)
        }
    }

    @Test("registering an action while another thread cancels: it runs exactly once, whichever comes first")
    func concurrentOnCancelAndCancel() {
        let count = 2000
        let logs = (0..<count).map { _ in ResponderLog() }
        let responders = logs.map { $0.responder() }
        DispatchQueue.concurrentPerform(iterations: count * 2) { index in
            let responder = responders[index / 2]
            if index % 2 == 0 {
                responder.onCancel { logs[index / 2].cancelRan() }
            } else {
                responder.cancel()
            }
        }
        let runs = logs.map(\.cancelRuns)
        #expect(runs.allSatisfy { $0 == 1 }, "actions that did not run exactly once: \(runs.enumerated().filter { $0.element != 1 }.count)")
    }

    @Test("a responder with a receiver object hands it the first answer only, and still runs its cancel action")
    func receiverObject() {
        let receiver = RecordingReceiver()
        let responder = CallResponder(receiver: receiver)
        responder.respond(.success(Self.first))
        responder.respond(.failure(WorkFailure()))
        #expect(receiver.log.messages == [Self.first])

        let cancelled = RecordingReceiver()
        let other = CallResponder(receiver: cancelled)
        other.onCancel { cancelled.log.cancelRan() }
        other.cancel()
        #expect(other.isCancelled)
        #expect(cancelled.log.cancelRuns == 1)
        other.respond(.failure(WorkFailure()))
        #expect(cancelled.log.deliveries.count == 1)  // a cancelled call still takes its one answer
    }
}
