import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

// A callback call cancelled by the client, by a deadline, or by its connection closing.
extension LiveTests.CallbackHandlerLiveTests {
    @Test("the client cancelling its call runs the handler's cancel action, and the server logs CANCELLED once",
          arguments: [64 * 1024, 0])
    func clientCancellation(inlineStartLimit: Int) async throws {
        let lines = CapturedLogLines()
        try await Self.withServer(logger: lines.logger, configure: { $0.inlineStartLimit = inlineStartLimit }) { fixture in
            let client = fixture.client
            let call = Task {
                try await client.unary(CallbackContract.answer, TextMessage(text: "hang"), options: Self.options("cb-cancel"))
            }
            let started = await eventually(within: .seconds(5)) { fixture.probe.started("hang") == 1 }
            try #require(started, "the handler never started")
            #expect(fixture.probe.cancelled("hang") == 0)
            let (result, elapsed) = await timed {
                call.cancel()
                return await call.result
            }
            switch result {
            case .success(let answer): Issue.record("the cancelled call succeeded with \(answer)")
            case .failure(let error as RPCError): #expect(error.code == .cancelled, "got \(error)")
            case .failure(let error): #expect(error is CancellationError, "got \(type(of: error)): \(error)")
            }
            #expect(elapsed < .seconds(2), "the cancelled call took \(elapsed)")
            let cancelled = await eventually(within: .seconds(3)) { fixture.probe.cancelled("hang") == 1 }
            #expect(cancelled, "the handler's cancel action never ran")
            await Self.waitForLines(lines, ["cb-cancel"])
            #expect(Self.lines(lines, for: "cb-cancel").map { $0["status"] } == ["CANCELLED"])
            // The connection still serves.
            let after = try await client.unary(CallbackContract.answer, TextMessage(text: "now"), options: Self.options())
            #expect(after.text == "now")
            #expect(fixture.probe.cancelled("hang") == 1)
        }
    }

    @Test("a short client deadline on a handler that never answers: DEADLINE_EXCEEDED at the deadline, and the cancel action runs",
          arguments: [64 * 1024, 0])
    func deadline(inlineStartLimit: Int) async throws {
        let lines = CapturedLogLines()
        try await Self.withServer(logger: lines.logger, configure: { $0.inlineStartLimit = inlineStartLimit }) { fixture in
            let (_, elapsed) = await timed {
                await expectRPCError(.deadlineExceeded) {
                    try await fixture.client.unary(
                        CallbackContract.answer, TextMessage(text: "hang"), options: Self.options("cb-deadline", timeout: .milliseconds(300)))
                }
            }
            #expect(elapsed < .seconds(3), "a 300 ms deadline took \(elapsed)")
            #expect(fixture.probe.started("hang") == 1)
            let cancelled = await eventually(within: .seconds(3)) { fixture.probe.cancelled("hang") == 1 }
            #expect(cancelled, "the handler's cancel action never ran")
            await Self.waitForLines(lines, ["cb-deadline"])
            // The server's timer or the client's reset, whichever came first, ended it.
            let statuses = Self.lines(lines, for: "cb-deadline").map { $0["status"] ?? "" }
            #expect(statuses == ["DEADLINE_EXCEEDED"] || statuses == ["CANCELLED"], "statuses: \(statuses)")
        }
    }

    @Test("the server enforces grpc-timeout by itself on a callback call: the cancel action runs and the call is answered")
    func serverEnforcesTimeout() async throws {
        try await Self.withServer { fixture in
            // A raw client that sends grpc-timeout but keeps no timer of its own.
            let socket = try RawSocket(port: fixture.port)
            var bytes = HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
            bytes += HTTP2Bytes.frame(
                type: HTTP2Bytes.headers, flags: HTTP2Bytes.endHeaders, stream: 1,
                payload: HTTP2Bytes.requestBlock(path: CallbackContract.answer.path, extra: [("grpc-timeout", "300m")]))
            bytes += HTTP2Bytes.frame(
                type: HTTP2Bytes.data, flags: HTTP2Bytes.endStream, stream: 1,
                payload: MessageFraming.frame(Data(#"{"text":"hang"}"#.utf8)))
            socket.send(bytes)
            let cancelled = await eventually(within: .seconds(5)) { fixture.probe.cancelled("hang") == 1 }
            let (received, _) = await socket.readUntilClosed(timeout: .milliseconds(500))
            socket.close()
            #expect(cancelled, "the handler was not cancelled at the 300 ms grpc-timeout")
            let frames = HTTP2Bytes.parseFrames(received)
            #expect(
                frames.contains { $0.type == HTTP2Bytes.headers && $0.stream == 1 && $0.flags & HTTP2Bytes.endStream != 0 },
                "no final HEADERS on stream 1; frames: \(frames)")
        }
    }

    @Test("the client's connection closing cancels the handler's responder", arguments: [64 * 1024, 0])
    func connectionClose(inlineStartLimit: Int) async throws {
        let lines = CapturedLogLines()
        try await Self.withServer(logger: lines.logger, configure: { $0.inlineStartLimit = inlineStartLimit }) { fixture in
            let other = try fixture.makeClient()
            let call = Task {
                try await other.unary(CallbackContract.answer, TextMessage(text: "hang"), options: Self.options("cb-close"))
            }
            let started = await eventually(within: .seconds(5)) { fixture.probe.started("hang") == 1 }
            try #require(started, "the handler never started")
            await other.close()
            let cancelled = await eventually(within: .seconds(3)) { fixture.probe.cancelled("hang") == 1 }
            #expect(cancelled, "the handler's cancel action never ran")
            if case .success(let answer) = await call.result { Issue.record("the call succeeded with \(answer)") }
            await Self.waitForLines(lines, ["cb-close"])
            #expect(Self.lines(lines, for: "cb-close").map { $0["status"] } == ["CANCELLED"])
        }
    }
}
