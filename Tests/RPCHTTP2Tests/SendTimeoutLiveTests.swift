import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

extension LiveTests {
    /// ``ServerConfiguration/sendTimeout``: answers a client does not take are given up on, not
    /// kept for as long as it keeps its connection; a client that takes them, however slowly,
    /// is left alone.
    @Suite("Send timeout")
    struct SendTimeoutLiveTests {
        /// Short enough for a test, long enough that a busy machine does not trip it.
        static let timeout: Duration = .milliseconds(400)

        /// One call of `path` from a raw client that opens no window (SETTINGS_INITIAL_WINDOW_SIZE
        /// 0, never a WINDOW_UPDATE): the frames it received within 2 s (five send timeouts),
        /// and whether the server closed the connection.
        static func callWithShutWindow(
            _ live: LiveServer, path: String, message: String, extra: [(String, String)] = []
        ) async throws -> (frames: [(type: UInt8, flags: UInt8, stream: UInt32, length: Int)], closed: Bool) {
            let socket = try RawSocket(port: live.port)
            socket.send(HTTP2Bytes.unaryRequest(path: path, message: message, extra: extra, settings: [(4, 0)]))
            let (received, closed) = await socket.readUntilClosed(timeout: .seconds(2))
            socket.close()
            return (HTTP2Bytes.parseFrames(received), closed)
        }

        @Test("an answer waiting on a window the client never opens is reset, with no deadline to end it")
        func shutWindowReset() async throws {
            try await withLiveServer(configure: { $0.sendTimeout = Self.timeout }) { live in
                // No grpc-timeout and no default unary deadline on the server: only the send
                // timeout can end it.
                let (frames, closed) = try await Self.callWithShutWindow(live, path: EchoContract.unary.path, message: #"{"text":"never read"}"#)
                #expect(!frames.contains { $0.type == HTTP2Bytes.data && $0.stream == 1 }, "DATA sent into a shut window: \(frames)")
                #expect(frames.contains { $0.type == 3 && $0.stream == 1 }, "stream 1 was not reset; frames: \(frames)")
                #expect(!closed, "the connection itself was closed; only the stream should be")
                // The server serves on.
                let answer = try await live.client.unary(EchoContract.unary, TextMessage(text: "after"))
                #expect(answer.text == "after")
            }
        }

        @Test("the log line of an answer reset unsent gives why, not the handler's OK")
        func resetAnswerLogged() async throws {
            let lines = CapturedLogLines()
            try await withLiveServer(configure: { $0.sendTimeout = Self.timeout }, logger: lines.logger) { live in
                // One answer ended by the send timeout, one by its deadline, both after the
                // handler answered OK; one read normally.
                _ = try await Self.callWithShutWindow(
                    live, path: EchoContract.unary.path, message: #"{"text":"a"}"#, extra: [("x-request-id", "unsent-timeout")])
                _ = try await Self.callWithShutWindow(
                    live, path: EchoContract.unary.path, message: #"{"text":"b"}"#,
                    extra: [("x-request-id", "unsent-deadline"), ("grpc-timeout", "100m")])
                _ = try await live.client.unary(EchoContract.unary, TextMessage(text: "c"), options: CallOptions(metadata: ["x-request-id": "read"]))
                // A handler that failed after writing: its INTERNAL status waits behind the unsent
                // message, and the reset must not hide it.
                _ = try await Self.callWithShutWindow(
                    live, path: FixtureContract.writeThenFail.path, message: "{}", extra: [("x-request-id", "unsent-failure")])
                // A deadline that passes before the request has even ended.
                let socket = try RawSocket(port: live.port)
                socket.send(
                    HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
                        + HTTP2Bytes.frame(
                            type: HTTP2Bytes.headers, flags: HTTP2Bytes.endHeaders, stream: 1,
                            payload: HTTP2Bytes.requestBlock(
                                path: EchoContract.unary.path, extra: [("x-request-id", "unended"), ("grpc-timeout", "100m")])))
                _ = await socket.readUntilClosed(timeout: .milliseconds(500))
                socket.close()
            }
            let calls = lines.calls
            for (requestID, status) in [
                ("unsent-timeout", "CANCELLED"), ("unsent-deadline", "DEADLINE_EXCEEDED"), ("read", "OK"),
                ("unsent-failure", "CANCELLED"), ("unended", "DEADLINE_EXCEEDED"),
            ] {
                let logged = calls.filter { $0.fields["request-id"] == requestID }
                #expect(logged.count == 1 && logged.first?.fields["status"] == status, "\(requestID): \(logged)")
            }
            let failure = calls.first { $0.fields["request-id"] == "unsent-failure" }
            #expect(failure?.level == .error, "\(String(describing: failure))")
            #expect(failure?.fields["handler-status"] == "INTERNAL", "\(String(describing: failure))")
            #expect(failure?.fields["cause"]?.contains("on purpose") == true, "\(String(describing: failure))")
        }

        @Test("a unary answer too large to buffer whole is reset too, though its handler still waits to write it")
        func largeUnaryAnswerReset() async throws {
            try await withLiveServer(configure: { $0.sendTimeout = Self.timeout }) { live in
                // A 1 MiB answer: above the outbound mark, so the handler waits in write() for
                // bytes that cannot leave, and the call never finishes by itself.
                let (frames, closed) = try await Self.callWithShutWindow(live, path: FixtureContract.largeAnswer.path, message: "{}")
                #expect(frames.contains { $0.type == 3 && $0.stream == 1 }, "the large answer was not reset; frames: \(frames)")
                #expect(!closed)
            }
        }

        @Test("a call still running is left to its backpressure, however long the window stays shut")
        func runningCallKept() async throws {
            try await withLiveServer(configure: { $0.sendTimeout = Self.timeout }) { live in
                // The download's handler writes until backpressure holds it; nothing can leave.
                let (frames, closed) = try await Self.callWithShutWindow(live, path: FixtureContract.download.path, message: "{}")
                #expect(frames.contains { $0.type == HTTP2Bytes.headers && $0.stream == 1 }, "the download never started: \(frames)")
                #expect(!frames.contains { $0.type == 3 && $0.stream == 1 }, "a running call was reset: \(frames)")
                #expect(!closed)
            }
        }

        @Test("a connection whose socket takes nothing is closed")
        func stalledSocketClosed() async throws {
            try await withLiveServer(configure: { $0.sendTimeout = Self.timeout }) { live in
                // Windows wide open, so the 64 MiB download fills the socket buffers; then this
                // client never reads a byte.
                let before = live.server.openConnectionCount
                let socket = try RawSocket(port: live.port)
                socket.send(
                    HTTP2Bytes.unaryRequest(path: FixtureContract.download.path, message: "{}", settings: [(4, 0x7FFF_FFFF)])
                        + HTTP2Bytes.frame(type: 8, payload: [0x7F, 0xFF, 0x00, 0x00]))  // connection WINDOW_UPDATE
                #expect(await eventually(within: .seconds(5)) { live.server.openConnectionCount == before + 1 })
                // Polled here, not with `eventually`: after the `#expect(await eventually { … })`
                // above, Swift 6.3.1 gave such a closure the same symbol as that one, and it
                // passed at once (README, "A compiler bug tests must avoid").
                let start = ContinuousClock.now
                var closed = false
                while !closed && ContinuousClock.now - start < .seconds(5) {
                    closed = live.server.openConnectionCount == before
                    if !closed { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(closed, "the server still holds the connection of a client that reads nothing")
                socket.close()
                let answer = try await live.client.unary(EchoContract.unary, TextMessage(text: "after"))
                #expect(answer.text == "after")
            }
        }

        @Test("a client that reads slowly but keeps reading gets all of its answer")
        func slowReaderKept() async throws {
            try await withLiveServer(configure: { $0.sendTimeout = Self.timeout }) { live in
                // Pauses shorter than the send timeout, adding up to several times it.
                let received = try await live.client.withCall(path: FixtureContract.download.path, options: CallOptions()) { call in
                    try await call.send(Data("{}".utf8))
                    call.finishSending()
                    var received = 0
                    var messages = 0
                    while let message = try await call.nextMessage() {
                        received += message.count
                        messages += 1
                        if messages % 128 == 0 { try await Task.sleep(for: .milliseconds(150)) }
                    }
                    return received
                }
                #expect(received == FixtureContract.downloadChunk * FixtureContract.downloadCount)
            }
        }
    }
}
