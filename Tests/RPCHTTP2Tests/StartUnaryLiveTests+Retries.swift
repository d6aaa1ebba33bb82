import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

// startUnary's retries: the rules of `withRetries`, `mayRetry`, the deadline, a refused stream.
extension LiveTests.StartUnaryLiveTests {
    @Test("an idempotent call answered UNAVAILABLE before any response header is retried until it succeeds; mayRetry is told each failed attempt")
    func retriesIdempotent() async throws {
        try await Self.withServer { client, _, state, _ in
            state.failuresLeft.store(2, ordering: .relaxed)
            let recorder = UnaryCompletionRecorder()
            let veto = UnaryRetryVeto()
            client.startUnary(
                RawUnaryContract.flakyIdempotent, request: Data("third time".utf8), options: Self.options, mayRetry: veto.mayRetry,
                completion: recorder.completion)
            let completion = try #require(await recorder.first())
            #expect(try completion.result.get() == Data("third time".utf8))
            #expect(state.calls(RawUnaryContract.flakyIdempotent) == 3)
            let questions = veto.questions
            #expect(questions.count == 2)
            #expect(questions.allSatisfy { $0.error.code == .unavailable && $0.error.message == "warming up" })
            // Each question names the attempt that failed, a different call each time, and
            // the completion the last one.
            let attempts = questions.compactMap(\.attempt)
            #expect(attempts.count == 2)
            #expect(attempts.allSatisfy { $0.serverAnswered && !$0.hasResponseHeaders })
            let last = try #require(completion.attempt)
            #expect(attempts.count == 2 && attempts[0] !== attempts[1] && !attempts.contains { $0 === last })
            await recorder.expectExactlyOnce()
        }
    }

    @Test("an idempotent call that keeps failing is attempted maxAttempts times")
    func attemptsAreBounded() async throws {
        try await Self.withServer(configureClient: { $0.retry.maxAttempts = 4 }) { client, _, state, _ in
            state.failuresLeft.store(100, ordering: .relaxed)
            let recorder = UnaryCompletionRecorder()
            let veto = UnaryRetryVeto()
            client.startUnary(
                RawUnaryContract.flakyIdempotent, request: Data("never".utf8), options: Self.options, mayRetry: veto.mayRetry,
                completion: recorder.completion)
            let error = try #require(await recorder.error())
            #expect(error.code == .unavailable)
            #expect(state.calls(RawUnaryContract.flakyIdempotent) == 4)
            #expect(veto.questions.count == 3)
            await recorder.expectExactlyOnce()
        }
    }

    @Test("a call that is not idempotent is not retried, and mayRetry is not asked")
    func noRetryOfOthers() async throws {
        try await Self.withServer { client, _, state, _ in
            state.failuresLeft.store(1, ordering: .relaxed)
            let recorder = UnaryCompletionRecorder()
            let veto = UnaryRetryVeto()
            client.startUnary(
                RawUnaryContract.flaky, request: Data("once".utf8), options: Self.options, mayRetry: veto.mayRetry,
                completion: recorder.completion)
            let error = try #require(await recorder.error())
            #expect(error.code == .unavailable)
            #expect(error.message == "warming up")
            #expect(state.calls(RawUnaryContract.flaky) == 1)
            #expect(veto.questions.isEmpty)
            await recorder.expectExactlyOnce()
        }
    }

    @Test("mayRetry answering false stops the retries: the failed attempt's error completes the call")
    func mayRetryVetoes() async throws {
        try await Self.withServer { client, _, state, _ in
            state.failuresLeft.store(100, ordering: .relaxed)
            let recorder = UnaryCompletionRecorder()
            let veto = UnaryRetryVeto { asked in asked < 2 }  // one retry, then no more
            client.startUnary(
                RawUnaryContract.flakyIdempotent, request: Data("vetoed".utf8), options: Self.options, mayRetry: veto.mayRetry,
                completion: recorder.completion)
            let error = try #require(await recorder.error())
            #expect(error.code == .unavailable)
            #expect(state.calls(RawUnaryContract.flakyIdempotent) == 2)
            #expect(veto.questions.count == 2)
            await recorder.expectExactlyOnce()
        }
    }

    @Test("a stream the server refused unprocessed is retried even for a method that is not idempotent")
    func refusedStreamIsRetried() async throws {
        // One stream at a time: calls sent before the client learns the limit are refused.
        try await Self.withServer(configureServer: { $0.limits.maxConcurrentStreams = 1 }) { client, _, state, _ in
            let veto = UnaryRetryVeto()
            let recorders = (0..<3).map { _ in UnaryCompletionRecorder() }
            for (index, recorder) in recorders.enumerated() {
                client.startUnary(
                    RawUnaryContract.slow, request: Data("slow \(index)".utf8), options: Self.options, mayRetry: veto.mayRetry,
                    completion: recorder.completion)
            }
            let done = await eventually(within: .seconds(10)) { recorders.allSatisfy { $0.count > 0 } }
            try #require(done, "not every call completed")
            for (index, recorder) in recorders.enumerated() {
                let answer = try recorder.all.first?.result.get()
                #expect(answer == Data("slow \(index)".utf8))
            }
            #expect(!veto.questions.isEmpty, "no stream was refused")
            #expect(veto.questions.allSatisfy { $0.error.reason == "REFUSED_STREAM" && $0.attempt?.serverAnswered != true })
            #expect(state.calls(RawUnaryContract.slow) == 3)
        }
    }

    @Test("a failure after the response headers is not retried, even for an idempotent method")
    func noRetryAfterHeaders() async throws {
        try await Self.withServer { client, _, state, _ in
            let recorder = UnaryCompletionRecorder()
            let veto = UnaryRetryVeto()
            client.startUnary(
                RawUnaryContract.unavailableAfterHeaders, request: Data("x".utf8), options: Self.options, mayRetry: veto.mayRetry,
                completion: recorder.completion)
            let error = try #require(await recorder.error())
            #expect(error.code == .unavailable)
            #expect(error.message == "gone mid-answer")
            #expect(state.calls(RawUnaryContract.unavailableAfterHeaders) == 1)
            #expect(veto.questions.isEmpty)
            #expect(recorder.all.first?.attempt?.hasResponseHeaders == true)
        }
    }

    @Test("a retry that would start after the deadline is not made; without a deadline the same call would be retried")
    func deadlineStopsRetries() async throws {
        // Backoff of up to 11 days: the random delay before a retry practically always
        // ends after a 10 s deadline.
        try await Self.withServer(configureClient: {
            $0.retry.initialBackoff = .seconds(1_000_000)
            $0.retry.maxBackoff = .seconds(1_000_000)
        }) { client, _, state, _ in
            state.failuresLeft.store(100, ordering: .relaxed)
            let recorder = UnaryCompletionRecorder()
            let veto = UnaryRetryVeto()
            let (error, elapsed) = await timed {
                client.startUnary(
                    RawUnaryContract.flakyIdempotent, request: Data("x".utf8), options: CallOptions(timeout: .seconds(10)),
                    mayRetry: veto.mayRetry, completion: recorder.completion)
                return await recorder.error()
            }
            #expect(error?.code == .unavailable)
            #expect(elapsed < .seconds(3), "took \(elapsed)")
            #expect(veto.questions.isEmpty)
            #expect(state.calls(RawUnaryContract.flakyIdempotent) == 1)

            // The control: without a deadline a retry is due, so mayRetry is asked (and says no).
            let control = UnaryCompletionRecorder()
            let refusing = UnaryRetryVeto { _ in false }
            client.startUnary(
                RawUnaryContract.flakyIdempotent, request: Data("x".utf8), options: CallOptions(), mayRetry: refusing.mayRetry,
                completion: control.completion)
            #expect(await control.error()?.code == .unavailable)
            #expect(refusing.questions.count == 1)
            #expect(state.calls(RawUnaryContract.flakyIdempotent) == 2)
        }
    }

    @Test("an idempotent call to an upstream that is down, then comes up, succeeds on a retry")
    func upstreamComesUp() async throws {
        let port = try deadPort()
        let state = RawUnaryServerState()
        var configuration = ServerConfiguration(host: "127.0.0.1", port: port)
        configuration.loopCount = 1
        let server = try HTTP2Server(configuration: configuration, router: Self.router(state: state), logger: quietLogger)
        let startFailure = Mutex<String?>(nil)
        // The first failed attempt brings the server up; the next attempts find it.
        let veto = UnaryRetryVeto { asked in
            if asked == 1 {
                do { try server.start() } catch { startFailure.withLock { $0 = "\(error)" } }
            }
            return true
        }
        let (client, _) = try Self.makeClient(port: port) { $0.reconnectInitialBackoff = .milliseconds(1) }
        let recorder = UnaryCompletionRecorder()
        client.startUnary(
            RawUnaryContract.echo.retargeted(idempotent: true), request: Data("came up".utf8), options: Self.options,
            mayRetry: veto.mayRetry, completion: recorder.completion)
        let completion = await recorder.first()
        await client.close()
        await server.shutdown()
        #expect(startFailure.withLock { $0 } == nil)
        let result = try #require(completion?.result)
        #expect(try result.get() == Data("came up".utf8))
        let first = try #require(veto.questions.first)
        #expect(first.error.code == .unavailable)
        #expect(first.attempt?.serverAnswered != true)
        #expect(state.calls(RawUnaryContract.echo) == 1)
    }
}
