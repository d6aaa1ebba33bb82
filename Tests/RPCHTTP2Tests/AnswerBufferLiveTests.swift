import Foundation
import Logging
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

extension LiveTests {
    /// ``AnswerBufferLimits``: answers held for clients that keep their window shut are bounded
    /// per connection and per server; past a bound new calls are refused `SERVER_BUSY`, clients
    /// that read their answers are served on, and what was held is given back.
    @Suite("Answer buffer bounds")
    struct AnswerBufferLiveTests {
        /// An echo text whose answer is ~4 KiB.
        static let bigText = String(repeating: "x", count: 4000)

        /// A raw client that opens no window for answers (SETTINGS_INITIAL_WINDOW_SIZE 0) and
        /// sends `calls` unary echo calls of ~4 KiB answers on streams 1, 3, 5, …
        static func shutWindowClient(port: Int, calls: Int, firstRequestID: Int = 0) throws -> RawSocket {
            let socket = try RawSocket(port: port)
            var bytes = HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings, payload: [0, 4, 0, 0, 0, 0])
            let message = Array(MessageFraming.frame(Data(#"{"text":"\#(bigText)"}"#.utf8)))
            for index in 0..<calls {
                let stream = UInt32(2 * index + 1)
                let block = HTTP2Bytes.requestBlock(
                    path: EchoContract.unary.path, extra: [("x-request-id", "held-\(firstRequestID + index)")])
                bytes += HTTP2Bytes.frame(type: HTTP2Bytes.headers, flags: HTTP2Bytes.endHeaders, stream: stream, payload: block)
                bytes += HTTP2Bytes.frame(type: HTTP2Bytes.data, flags: HTTP2Bytes.endStream, stream: stream, payload: message)
            }
            socket.send(bytes)
            return socket
        }

        /// The request ids of the call lines refused `SERVER_BUSY`, and of those answered OK.
        static func outcomes(_ lines: CapturedLogLines) -> (busy: Set<String>, ok: Set<String>) {
            let calls = lines.calls
            let busy = calls.filter { $0.fields["reason"] == "SERVER_BUSY" && $0.fields["status"] == "RESOURCE_EXHAUSTED" }
            let ok = calls.filter { $0.fields["status"] == "OK" }
            return (Set(busy.compactMap { $0.fields["request-id"] }), Set(ok.compactMap { $0.fields["request-id"] }))
        }

        @Test("a connection holding more than its bound of unread answers has its new calls refused SERVER_BUSY; others are served")
        func perConnectionBound() async throws {
            let lines = CapturedLogLines()
            try await withLiveServer(configure: {
                $0.answerBuffer = AnswerBufferLimits(perConnection: 64 * 1024, perProcess: 64 * 1024 * 1024)
            }, logger: lines.logger) { live in
                // 40 answers of ~4 KiB on a shut window: ~160 KiB asked, 64 KiB allowed.
                let socket = try Self.shutWindowClient(port: live.port, calls: 40)
                defer { socket.close() }
                let refused = await eventually { Self.outcomes(lines).busy.count >= 20 }
                #expect(refused, "calls beyond the bound were not refused: \(lines.calls.count) lines")
                // What the server holds stays near the bound: the bound plus at most the calls
                // admitted just under it (one answer each) and the charge of open streams.
                #expect(live.server.heldAnswerBytes < 64 * 1024 + 8 * 1024 + 40 * 1024, "held \(live.server.heldAnswerBytes)")
                // A client that reads is served all the while.
                let answer = try await live.client.unary(EchoContract.unary, TextMessage(text: Self.bigText))
                #expect(answer.text == Self.bigText)
            }
        }

        @Test("past the server's bound, connections above their fair share are refused and the others are served")
        func perProcessBound() async throws {
            let lines = CapturedLogLines()
            try await withLiveServer(configure: {
                var limits = AnswerBufferLimits(perConnection: 1024 * 1024, perProcess: 96 * 1024)
                limits.fairShare = 16 * 1024
                $0.answerBuffer = limits
            }, logger: lines.logger) { live in
                // Two clients, each under its own bound, together over the server's.
                let first = try Self.shutWindowClient(port: live.port, calls: 20, firstRequestID: 0)
                defer { first.close() }
                let second = try Self.shutWindowClient(port: live.port, calls: 20, firstRequestID: 100)
                defer { second.close() }
                let refused = await eventually { Self.outcomes(lines).busy.count >= 10 }
                #expect(refused, "no call was refused past the server's bound: \(Self.outcomes(lines))")
                #expect(live.server.heldAnswerBytes < 96 * 1024 + 16 * 1024 + 40 * 1024, "held \(live.server.heldAnswerBytes)")
                // A reader holds nothing for long: always under its fair share, always served.
                for index in 0..<5 {
                    let answer = try await live.client.unary(EchoContract.unary, TextMessage(text: "reader \(index)"))
                    #expect(answer.text == "reader \(index)")
                }
            }
        }

        @Test("many connections each under the fair share are held to a share of the server's bound")
        func manyConnectionsShareTheBound() async throws {
            let lines = CapturedLogLines()
            try await withLiveServer(configure: {
                // The default fair share (256 KiB) would let each of them hold all it asks.
                $0.answerBuffer = AnswerBufferLimits(perConnection: 1024 * 1024, perProcess: 64 * 1024)
            }, logger: lines.logger) { live in
                var sockets: [RawSocket] = []
                defer { for socket in sockets { socket.close() } }
                for index in 0..<8 {
                    sockets.append(try Self.shutWindowClient(port: live.port, calls: 12, firstRequestID: 100 * index))
                }
                let refused = await eventually { Self.outcomes(lines).busy.count >= 8 }
                #expect(refused, "connections under the fair share were never refused: \(Self.outcomes(lines))")
                // 8 x 12 answers of ~5 KiB asked (~480 KiB); each connection is held near its
                // share (16 KiB) plus the one answer that crossed it.
                try await Task.sleep(for: .milliseconds(300))  // the rest of the 96 calls arrive
                #expect(live.server.heldAnswerBytes < 64 * 1024 + 8 * 24 * 1024, "held \(live.server.heldAnswerBytes)")
                let answer = try await live.client.unary(EchoContract.unary, TextMessage(text: "reader"))
                #expect(answer.text == "reader")
            }
        }

        @Test("what was held is given back when the streams end: the count returns to zero")
        func heldBytesReturn() async throws {
            try await withLiveServer(configure: {
                $0.answerBuffer = AnswerBufferLimits(perConnection: 64 * 1024, perProcess: 64 * 1024 * 1024)
            }) { live in
                let socket = try Self.shutWindowClient(port: live.port, calls: 30)
                let held = await eventually { live.server.heldAnswerBytes > 32 * 1024 }
                #expect(held, "the shut-window answers were not counted: \(live.server.heldAnswerBytes)")
                socket.close()
                // Normal calls (and streams) meanwhile, on another connection.
                let client = try live.makeClient()
                for index in 0..<20 { _ = try await client.unary(EchoContract.unary, TextMessage(text: "\(index)")) }
                let texts = try await client.collect(EchoContract.serverStream, StreamRequest(text: "s", count: 5))
                #expect(texts.count == 5)
                await client.close()
                await live.client.close()
                let drained = await eventually { live.server.heldAnswerBytes == 0 }
                #expect(drained, "still held after every stream ended: \(live.server.heldAnswerBytes)")
            }
        }
    }
}
