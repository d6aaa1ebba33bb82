import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

extension LiveTests {
    /// Deadlines and cancellation reach the server handler's task.
    @Suite("Deadlines and cancellation")
    struct DeadlineAndCancellationLiveTests {
        @Test("a deadline on a sleeping handler fails fast with DEADLINE_EXCEEDED and cancels the handler")
        func deadlineCancelsHandler() async throws {
            try await withLiveServer { live in
                let (_, elapsed) = await timed {
                    await expectRPCError(.deadlineExceeded) {
                        try await live.client.unary(
                            EchoContract.sleep, SleepRequest(millis: 10_000), options: CallOptions(timeout: .milliseconds(500)))
                    }
                }
                #expect(elapsed < .seconds(3), "the call took \(elapsed) for a 500 ms deadline on a 10 s sleep")
                try #require(live.probe.count(.sleepStarted) == 1, "the Sleep handler did not start within the deadline")
                let cancelled = await eventually(within: .seconds(3)) { live.probe.count(.sleepCancelled) == 1 }
                #expect(cancelled, "the handler never saw its task cancelled")
                #expect(live.probe.count(.sleepFinished) == 0)
            }
        }

        @Test("a call's deadline holds while its connection is still being made")
        func deadlineWhileConnecting() async throws {
            // A listener whose one-connection queue is full: a new connection is never completed.
            let listener = try SilentListener(backlog: 0)
            defer { listener.close() }
            let filler = try RawSocket(port: listener.port)
            var configuration = ClientConfiguration()
            configuration.connectTimeout = .seconds(20)
            var retry = RetryPolicy()
            retry.maxAttempts = 1
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: listener.port), configuration: configuration, retry: retry)
            let (_, elapsed) = await timed {
                await expectRPCError(.deadlineExceeded) {
                    try await client.unary(EchoContract.unary, TextMessage(text: "x"), options: CallOptions(timeout: .milliseconds(300)))
                }
            }
            #expect(elapsed < .seconds(3), "the call took \(elapsed) for a 300 ms deadline")
            await client.close()
            withExtendedLifetime(filler) {}
        }

        @Test("the server enforces grpc-timeout by itself: the handler is cancelled and the call is answered")
        func serverEnforcesTimeout() async throws {
            try await withLiveServer { live in
                // A raw client that sends grpc-timeout but keeps no timer of its own.
                let socket = try RawSocket(port: live.port)
                var bytes = HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
                bytes += HTTP2Bytes.frame(
                    type: HTTP2Bytes.headers, flags: HTTP2Bytes.endHeaders, stream: 1,
                    payload: HTTP2Bytes.requestBlock(path: EchoContract.sleep.path, extra: [("grpc-timeout", "300m")]))
                bytes += HTTP2Bytes.frame(
                    type: HTTP2Bytes.data, flags: HTTP2Bytes.endStream, stream: 1,
                    payload: MessageFraming.frame(Data(#"{"millis":10000}"#.utf8)))
                let start = ContinuousClock.now
                socket.send(bytes)
                let cancelled = await eventually(within: .seconds(5)) { live.probe.count(.sleepCancelled) == 1 }
                let elapsed = ContinuousClock.now - start
                let (received, _) = await socket.readUntilClosed(timeout: .milliseconds(500))
                socket.close()
                #expect(cancelled, "the handler was not cancelled at the 300 ms grpc-timeout")
                #expect(elapsed < .seconds(3), "the handler was cancelled after \(elapsed)")
                let frames = HTTP2Bytes.parseFrames(received)
                #expect(
                    frames.contains { $0.type == HTTP2Bytes.headers && $0.stream == 1 && $0.flags & HTTP2Bytes.endStream != 0 },
                    "no final HEADERS on stream 1; frames: \(frames)")
            }
        }

        @Test(
            "a call whose answer the client never takes (window 0) is reset at its deadline, not kept for good",
            arguments: [true, false])
        func unreadAnswerResetAtDeadline(sendsTimeout: Bool) async throws {
            // Without grpc-timeout the server's default unary deadline (the gateway's 10 s) applies.
            try await withLiveServer(configure: { $0.defaultUnaryTimeout = sendsTimeout ? nil : .milliseconds(300) }) { live in
                // A raw client that opens no window (SETTINGS_INITIAL_WINDOW_SIZE 0) and never
                // sends WINDOW_UPDATE: the answer's DATA, and the trailers behind it, cannot go.
                let socket = try RawSocket(port: live.port)
                socket.send(HTTP2Bytes.unaryRequest(
                    path: EchoContract.unary.path, message: #"{"text":"never read"}"#,
                    extra: sendsTimeout ? [("grpc-timeout", "300m")] : [], settings: [(4, 0)]))
                let (received, _) = await socket.readUntilClosed(timeout: .seconds(2))
                socket.close()
                let frames = HTTP2Bytes.parseFrames(received)
                #expect(!frames.contains { $0.type == HTTP2Bytes.data && $0.stream == 1 }, "DATA sent into a shut window: \(frames)")
                #expect(frames.contains { $0.type == 3 && $0.stream == 1 }, "stream 1 was not reset at its deadline; frames: \(frames)")
            }
        }

        @Test("the server's default unary deadline ends a call sent without grpc-timeout, and leaves streams alone")
        func defaultUnaryDeadline() async throws {
            try await withLiveServer(configure: { $0.defaultUnaryTimeout = .milliseconds(300) }) { live in
                await expectRPCError(.deadlineExceeded) {
                    try await live.client.unary(EchoContract.sleep, SleepRequest(millis: 5000))
                }
                #expect(await eventually(within: .seconds(5)) { live.probe.count(.sleepCancelled) == 1 })
                // A server stream outlives it: a 64 MiB download read after a 500 ms pause.
                let received = try await live.client.withCall(path: FixtureContract.download.path, options: CallOptions()) { call in
                    try await call.send(Data("{}".utf8))
                    call.finishSending()
                    try await Task.sleep(for: .milliseconds(500))
                    var received = 0
                    while let message = try await call.nextMessage() { received += message.count }
                    return received
                }
                #expect(received == FixtureContract.downloadChunk * FixtureContract.downloadCount)
            }
        }

        @Test("calls whose deadline passes while they wait for a stream slot leave the connection and its other calls alone")
        func deadlineWhileQueuedForAStream() async throws {
            try await withLiveServer { live in
                let client = live.client
                // Fill the server's 256 stream slots with 1.5 s sleeps…
                let long = (0..<256).map { _ in
                    Task { try await client.unary(EchoContract.sleep, SleepRequest(millis: 1500), options: CallOptions(timeout: .seconds(20))) }
                }
                try await Task.sleep(for: .milliseconds(300))
                // …so these wait in nghttp2's queue and time out there. Their requests were never
                // sent: a RST_STREAM for them would name idle streams, a connection error for the
                // server, and fail every call above (it did: 124 to 156 of 256 UNAVAILABLE).
                let short = (0..<20).map { _ in
                    Task { try await client.unary(EchoContract.sleep, SleepRequest(millis: 10), options: CallOptions(timeout: .milliseconds(200))) }
                }
                for task in short {
                    await expectRPCError(.deadlineExceeded) { _ = try await task.value }
                }
                var answered = 0
                var failures: [String] = []
                for task in long {
                    do {
                        _ = try await task.value
                        answered += 1
                    } catch {
                        failures.append("\(error)")
                    }
                }
                #expect(answered == 256, "\(failures.count) failed, e.g. \(failures.first ?? "")")
            }
        }

        @Test("a deadline that leaves enough time lets the call succeed")
        func generousDeadline() async throws {
            try await withLiveServer { live in
                let response = try await live.client.unary(
                    EchoContract.sleep, SleepRequest(millis: 50), options: CallOptions(timeout: .seconds(5)))
                #expect(response.text == "slept")
                #expect(live.probe.count(.sleepCancelled) == 0)
            }
        }

        @Test("cancelling the calling task resets the stream and stops the server handler")
        func clientCancellationStopsHandler() async throws {
            try await withLiveServer { live in
                let client = live.client
                let call = Task {
                    try await client.unary(EchoContract.sleep, SleepRequest(millis: 5000))
                }
                let started = await eventually(within: .seconds(10)) { live.probe.count(.sleepStarted) == 1 }
                try #require(started, "the Sleep handler never started")
                let (result, elapsed) = await timed {
                    call.cancel()
                    return await call.result
                }
                switch result {
                case .success(let response):
                    Issue.record("the cancelled call succeeded with \(response)")
                case .failure(let error as RPCError):
                    #expect(error.code == .cancelled, "got \(error)")
                case .failure(let error):
                    #expect(error is CancellationError, "got \(type(of: error)): \(error)")
                }
                #expect(elapsed < .seconds(2), "the cancelled call took \(elapsed) to end")
                let cancelled = await eventually(within: .seconds(3)) { live.probe.count(.sleepCancelled) == 1 }
                #expect(cancelled, "the handler never saw its task cancelled")
                // The connection is still usable.
                let after = try await client.unary(EchoContract.unary, TextMessage(text: "after"))
                #expect(after.text == "after")
            }
        }
    }
}
