import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

// Cancelling a startUnary call through its handle, and its deadline.
extension LiveTests.StartUnaryLiveTests {
    @Test("UnaryCallHandle.cancel completes the call with CANCELLED, once, and stops the server's handler")
    func cancel() async throws {
        try await Self.withServer { client, _, state, _ in
            let recorder = UnaryCompletionRecorder()
            let handle = client.startUnary(RawUnaryContract.hang, request: Data("x".utf8), options: Self.options, completion: recorder.completion)
            let started = await eventually(within: .seconds(5)) { state.hangStarted.value == 1 }
            try #require(started, "the handler never started")
            #expect(recorder.count == 0)
            handle.cancel()
            let error = try #require(await recorder.error(within: .seconds(2)))
            #expect(error.code == .cancelled)
            let cancelled = await eventually(within: .seconds(3)) { state.hangCancelled.value == 1 }
            #expect(cancelled, "the server's handler was not cancelled")
            handle.cancel()  // again, after the end: nothing more
            await recorder.expectExactlyOnce()
        }
    }

    @Test("a handle cancelled at once, or after the call completed, completes the call exactly once")
    func cancelEarlyAndLate() async throws {
        try await Self.withServer { client, _, _, _ in
            let early = UnaryCompletionRecorder()
            client.startUnary(RawUnaryContract.hang, request: Data("x".utf8), options: Self.options, completion: early.completion).cancel()
            #expect(await early.error()?.code == .cancelled)
            await early.expectExactlyOnce()

            let late = UnaryCompletionRecorder()
            let handle = client.startUnary(RawUnaryContract.echo, request: Data("done".utf8), options: Self.options, completion: late.completion)
            let done = try await late.first()?.result.get()
            #expect(done == Data("done".utf8))
            handle.cancel()
            await late.expectExactlyOnce()
        }
    }

    @Test("a handle cancelled while a retry is pending completes with CANCELLED, not with the failed attempt's error")
    func cancelBetweenAttempts() async throws {
        try await Self.withServer { client, _, state, _ in
            state.failuresLeft.store(100, ordering: .relaxed)
            let handle = Mutex<UnaryCallHandle?>(nil)
            let veto = UnaryRetryVeto { _ in
                handle.withLock { $0 }?.cancel()
                return true
            }
            let recorder = UnaryCompletionRecorder()
            let started = client.startUnary(
                RawUnaryContract.flakyIdempotent, request: Data("x".utf8), options: Self.options, mayRetry: veto.mayRetry,
                completion: recorder.completion)
            handle.withLock { $0 = started }
            let error = try #require(await recorder.error(within: .seconds(5)))
            #expect(error.code == .cancelled, "got \(error)")
            #expect(veto.questions.count == 1)
            await recorder.expectExactlyOnce()
        }
    }

    @Test("a handle cancelled while a retry is pending completes at once and makes no further attempt")
    func cancelDuringBackoff() async throws {
        try await Self.withServer(configureClient: {
            $0.retry.initialBackoff = .seconds(1)
            $0.retry.maxBackoff = .seconds(1)
            // The whole second: a jittered delay near 0 would retry before the test can cancel.
            $0.retry.jitter = { 1 }
        }) { client, _, state, _ in
            state.failuresLeft.store(100, ordering: .relaxed)
            let veto = UnaryRetryVeto()
            let recorder = UnaryCompletionRecorder()
            let handle = client.startUnary(
                RawUnaryContract.flakyIdempotent, request: Data("x".utf8), options: Self.options, mayRetry: veto.mayRetry,
                completion: recorder.completion)
            let failedOnce = await eventually(within: .seconds(5)) { veto.questions.count == 1 }
            try #require(failedOnce, "the first attempt never failed")
            let (error, elapsed) = await timed {
                handle.cancel()
                return await recorder.error(within: .seconds(5))
            }
            #expect(error?.code == .cancelled, "got \(String(describing: error))")
            try await Task.sleep(for: .milliseconds(1200))  // past the backoff: room for an attempt, which must not come
            let attempts = state.calls(RawUnaryContract.flakyIdempotent)
            #expect(attempts == 1, "the server served \(attempts) attempts of the cancelled call")
            #expect(elapsed < .milliseconds(500), "the cancelled call completed after \(elapsed)")
            await recorder.expectExactlyOnce()
        }
    }

    @Test("a short deadline on a call the server never answers completes it with DEADLINE_EXCEEDED and stops the handler")
    func deadline() async throws {
        try await Self.withServer { client, _, state, _ in
            let recorder = UnaryCompletionRecorder()
            let (error, elapsed) = await timed {
                client.startUnary(
                    RawUnaryContract.hang, request: Data("x".utf8), options: CallOptions(timeout: .milliseconds(300)),
                    completion: recorder.completion)
                return await recorder.error()
            }
            #expect(error?.code == .deadlineExceeded)
            #expect(elapsed < .seconds(3), "a 300 ms deadline took \(elapsed)")
            let cancelled = await eventually(within: .seconds(3)) { state.hangCancelled.value == 1 }
            #expect(cancelled, "the server's handler was not cancelled")
            await recorder.expectExactlyOnce()
        }
    }

    @Test("a deadline already past completes the call at once, on the calling thread, with DEADLINE_EXCEEDED")
    func deadlineAlreadyPast() async throws {
        try await Self.withServer { client, _, state, _ in
            let recorder = UnaryCompletionRecorder()
            client.startUnary(
                RawUnaryContract.echo, request: Data("x".utf8), options: CallOptions(deadline: ContinuousClock.now - .seconds(1)),
                completion: recorder.completion)
            // Before startUnary returned.
            #expect(recorder.count == 1)
            #expect(await recorder.error()?.code == .deadlineExceeded)
            #expect(recorder.all.first?.attempt == nil)
            #expect(state.calls(RawUnaryContract.echo) == 0)
        }
    }

    @Test("closing the client while a retry waits completes the call at once with CANCELLED, and no attempt follows")
    func closeDuringBackoff() async throws {
        try await Self.withServer { _, _, state, port in
            state.failuresLeft.store(100, ordering: .relaxed)
            let (client, _) = try Self.makeClient(port: port) {
                $0.retry.initialBackoff = .seconds(1)
                $0.retry.maxBackoff = .seconds(1)
                $0.retry.jitter = { 1 }  // a delay near 0 would retry before the test closes the client
            }
            let veto = UnaryRetryVeto()
            let recorder = UnaryCompletionRecorder()
            client.startUnary(
                RawUnaryContract.flakyIdempotent, request: Data("x".utf8), options: Self.options, mayRetry: veto.mayRetry,
                completion: recorder.completion)
            let failedOnce = await eventually(within: .seconds(5)) { veto.questions.count == 1 }
            try #require(failedOnce, "the first attempt never failed")
            let (error, elapsed) = await timed {
                await client.close()  // stops the client's loop, where the retry's timer waits
                return await recorder.error(within: .seconds(5))
            }
            #expect(error?.code == .cancelled, "got \(String(describing: error))")
            #expect(elapsed < .milliseconds(900), "the call completed after \(elapsed)")
            try await Task.sleep(for: .milliseconds(1200))  // past the backoff: no attempt may come
            #expect(state.calls(RawUnaryContract.flakyIdempotent) == 1)
            await recorder.expectExactlyOnce()
        }
    }
}
