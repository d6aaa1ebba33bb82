import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

// startUnary's answers: the one response message, server errors, and wrong message counts.
extension LiveTests.StartUnaryLiveTests {
    @Test("a call succeeds with the one response message, completed once on the client's loop thread")
    func success() async throws {
        try await Self.withServer { client, group, state, _ in
            let recorder = UnaryCompletionRecorder(group: group)
            let request = Data("héllo ✓ \u{0}\u{1}".utf8)
            client.startUnary(RawUnaryContract.echo, request: request, options: Self.options, completion: recorder.completion)
            let completion = try #require(await recorder.first())
            #expect(try completion.result.get() == request)
            #expect(completion.onClientLoop)
            #expect(completion.thread == "unary-0")
            let attempt = try #require(completion.attempt)
            #expect(attempt.serverAnswered)
            #expect(attempt.hasResponseHeaders)
            #expect(attempt.path == RawUnaryContract.echo.path)
            await recorder.expectExactlyOnce()
            #expect(state.calls(RawUnaryContract.echo) == 1)
        }
    }

    @Test("the call's metadata reaches the server")
    func metadata() async throws {
        try await Self.withServer { client, _, _, _ in
            let recorder = UnaryCompletionRecorder()
            let options = CallOptions(metadata: [MetadataKey.requestID: "su-meta-1", "x-note": "noted"], timeout: .seconds(10))
            client.startUnary(RawUnaryContract.metadata, request: Data(), options: options, completion: recorder.completion)
            let completion = try #require(await recorder.first())
            #expect(try completion.result.get() == Data("su-meta-1|noted".utf8))
        }
    }

    @Test("a response message of several megabytes arrives whole", arguments: [0, 100_000, 3 * 1024 * 1024])
    func largeResponse(size: Int) async throws {
        try await Self.withServer { client, _, _, _ in
            let recorder = UnaryCompletionRecorder()
            client.startUnary(RawUnaryContract.sized, request: Data("\(size)".utf8), options: Self.options, completion: recorder.completion)
            let completion = try #require(await recorder.first())
            let data = try completion.result.get()
            #expect(data.count == size)
            #expect(data.allSatisfy { $0 == 0x61 })
        }
    }

    @Test("200 calls started at once from many threads each complete once with their own answer")
    func concurrentCalls() async throws {
        try await Self.withServer { client, _, state, _ in
            let recorders = (0..<200).map { _ in UnaryCompletionRecorder() }
            DispatchQueue.concurrentPerform(iterations: 200) { index in
                client.startUnary(
                    RawUnaryContract.echo, request: Data("call \(index)".utf8), options: Self.options, completion: recorders[index].completion)
            }
            let done = await eventually(within: .seconds(10)) { recorders.allSatisfy { $0.count > 0 } }
            #expect(done)
            try await Task.sleep(for: .milliseconds(100))
            for (index, recorder) in recorders.enumerated() {
                #expect(recorder.count == 1, "call \(index)")
                #expect((try? recorder.all.first?.result.get()) == Data("call \(index)".utf8), "call \(index)")
            }
            #expect(state.calls(RawUnaryContract.echo) == 200)
        }
    }

    @Test("a server error completes the call with its code, reason and message")
    func serverError() async throws {
        try await Self.withServer { client, _, state, _ in
            let recorder = UnaryCompletionRecorder()
            client.startUnary(RawUnaryContract.fail, request: Data("x".utf8), options: Self.options, completion: recorder.completion)
            let error = try #require(await recorder.error())
            #expect(error.code == .notFound)
            #expect(error.reason == "NO_THING")
            #expect(error.message == "Nothing here ✓")
            #expect(recorder.all.first?.attempt?.serverAnswered == true)
            await recorder.expectExactlyOnce()
            #expect(state.calls(RawUnaryContract.fail) == 1)
        }
    }

    @Test("an OK answer with no response message, or with two, is INTERNAL", arguments: [
        (RawUnaryContract.none, "5", "The server sent no response message."),
        (RawUnaryContract.two, "5", "The server sent more than one response message."),
        (RawUnaryContract.two, "\(512 * 1024)", "The server sent more than one response message."),
    ])
    func wrongMessageCount(method: MethodInfo, request: String, message: String) async throws {
        try await Self.withServer { client, _, _, _ in
            let recorder = UnaryCompletionRecorder()
            client.startUnary(method, request: Data(request.utf8), options: CallOptions(timeout: .seconds(5)), completion: recorder.completion)
            let error = try #require(await recorder.error())
            #expect(error.code == .internal, "got \(error)")
            #expect(error.message == message)
            await recorder.expectExactlyOnce()
        }
    }

    @Test("two response messages too big for the stream window together are INTERNAL at once, as on the async path")
    func twoLargeMessages() async throws {
        try await Self.withServer { client, _, _, _ in
            let size = Data("\(1536 * 1024)".utf8)
            // The async path reads the first message, which grants window for the second.
            let asyncError = await expectRPCError(.internal) {
                try await client.withCall(path: RawUnaryContract.two.path, options: CallOptions(timeout: .seconds(5))) { call in
                    try await call.send(size)
                    call.finishSending()
                    return try await RPCClient.singleRawResponse(from: call)
                }
            }
            #expect(asyncError?.message == "The server sent more than one response message.")
            // Without a reader the call keeps its window open, so the second message arrives
            // and ends the call (a withheld window would leave it waiting for its deadline).
            let recorder = UnaryCompletionRecorder()
            let (error, elapsed) = await timed {
                client.startUnary(RawUnaryContract.two, request: size, options: CallOptions(timeout: .seconds(3)), completion: recorder.completion)
                return await recorder.error()
            }
            #expect(error?.code == .internal, "got \(String(describing: error)) after \(elapsed)")
            #expect(error?.message == "The server sent more than one response message.")
            #expect(elapsed < .seconds(2), "took \(elapsed)")
            await recorder.expectExactlyOnce()
        }
    }
}
