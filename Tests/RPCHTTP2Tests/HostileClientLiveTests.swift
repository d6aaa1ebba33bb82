import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

extension LiveTests {
    /// Bytes no well-behaved client sends, on raw sockets: each is survived, and a normal call on
    /// a separate client still succeeds afterwards.
    @Suite("Hostile clients")
    struct HostileClientLiveTests {
        /// Makes a normal call on a fresh client.
        static func expectServing(_ live: LiveServer, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let client = try live.makeClient()
            let result = await Result(awaiting: { try await client.unary(EchoContract.unary, TextMessage(text: "still serving")) })
            await client.close()
            #expect(try result.get().text == "still serving", sourceLocation: sourceLocation)
        }

        @Test("a garbage preface closes that connection only")
        func garbagePreface() async throws {
            try await withLiveServer { live in
                let socket = try RawSocket(port: live.port)
                socket.send(Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nthis is not http/2 at all".utf8))
                let (_, closed) = await socket.readUntilClosed(timeout: .seconds(3))
                socket.close()
                #expect(closed, "the server kept a connection with a bad preface open")
                try await Self.expectServing(live)
            }
        }

        @Test("a valid preface followed by a truncated frame and a close is survived")
        func truncatedFrame() async throws {
            try await withLiveServer { live in
                let socket = try RawSocket(port: live.port)
                // SETTINGS announcing 12 bytes of payload, of which only 3 arrive.
                let truncated = Array(HTTP2Bytes.frame(type: HTTP2Bytes.settings, payload: Array(repeating: 0, count: 12)).prefix(12))
                socket.send(HTTP2Bytes.preface + truncated)
                socket.finishSending()
                let (_, closed) = await socket.readUntilClosed(timeout: .seconds(3))
                socket.close()
                #expect(closed, "the server did not close a connection whose peer half-closed mid-frame")
                try await Self.expectServing(live)
            }
        }

        @Test("a header block with too many CONTINUATION frames ends the connection")
        func continuationFlood() async throws {
            try await withLiveServer { live in
                let socket = try RawSocket(port: live.port)
                var bytes = HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
                bytes += HTTP2Bytes.frame(
                    type: HTTP2Bytes.headers, stream: 1, payload: HTTP2Bytes.requestBlock(path: EchoContract.unary.path))
                for index in 0..<200 {
                    bytes += HTTP2Bytes.frame(
                        type: HTTP2Bytes.continuation, stream: 1, payload: HTTP2Bytes.literal("x-flood-\(index)", "v"))
                }
                socket.send(bytes)
                let (_, closed) = await socket.readUntilClosed(timeout: .seconds(3))
                socket.close()
                #expect(closed, "the server is still waiting for the end of a 200-CONTINUATION header block")
                try await Self.expectServing(live)
            }
        }

        @Test("a rapid-reset flood (open and cancel streams without end) ends that connection only")
        func rapidResetFlood() async throws {
            try await withLiveServer { live in
                let socket = try RawSocket(port: live.port)
                var bytes = HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
                let block = HTTP2Bytes.requestBlock(path: EchoContract.sleep.path)
                for index in 0..<3000 {
                    let stream = UInt32(2 * index + 1)
                    bytes += HTTP2Bytes.frame(type: HTTP2Bytes.headers, flags: HTTP2Bytes.endHeaders, stream: stream, payload: block)
                    bytes += HTTP2Bytes.frame(type: 3, stream: stream, payload: [0, 0, 0, 8])  // RST_STREAM(CANCEL)
                }
                socket.send(bytes)
                let (received, closed) = await socket.readUntilClosed(timeout: .seconds(5))
                socket.close()
                #expect(closed, "the server kept serving a connection that reset 3000 streams at once")
                #expect(HTTP2Bytes.parseFrames(received).contains { $0.type == HTTP2Bytes.goAway }, "no GOAWAY was sent")
                try await Self.expectServing(live)
            }
        }

        @Test("a peer opening more streams than the advertised 256 loses that connection only")
        func concurrentStreamLimit() async throws {
            try await withLiveServer { live in
                let socket = try RawSocket(port: live.port)
                // Our SETTINGS are acknowledged, so the limit of 256 is in force; 300 open streams
                // (HEADERS without END_STREAM) exceed it. nghttp2 1.52 treats that as a
                // connection error (GOAWAY PROTOCOL_ERROR) rather than refusing each extra stream.
                var bytes = HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
                bytes += HTTP2Bytes.frame(type: HTTP2Bytes.settings, flags: 0x1)
                socket.send(bytes)
                try await Task.sleep(for: .milliseconds(100))
                let block = HTTP2Bytes.requestBlock(path: EchoContract.clientStream.path)
                var streams: [UInt8] = []
                for index in 0..<300 {
                    streams += HTTP2Bytes.frame(type: HTTP2Bytes.headers, flags: HTTP2Bytes.endHeaders, stream: UInt32(2 * index + 1), payload: block)
                }
                socket.send(streams)
                let (received, closed) = await socket.readUntilClosed(timeout: .seconds(5))
                socket.close()
                #expect(closed)
                #expect(HTTP2Bytes.parseFrames(received).contains { $0.type == HTTP2Bytes.goAway })
                try await Self.expectServing(live)
            }
        }

        @Test("a request with more than 16 KiB of header block is answered, not served, and the connection survives")
        func oversizedHeaderBlock() async throws {
            try await withLiveServer { live in
                let socket = try RawSocket(port: live.port)
                let block = HTTP2Bytes.requestBlock(
                    path: EchoContract.unary.path, extra: [("x-pad", String(repeating: "p", count: 20 * 1024))])
                #expect(block.count > 16 * 1024)
                // HEADERS carries 16000 bytes, one CONTINUATION the rest; END_STREAM: no body.
                var bytes = HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
                bytes += HTTP2Bytes.frame(type: HTTP2Bytes.headers, flags: HTTP2Bytes.endStream, stream: 1, payload: Array(block[..<16000]))
                bytes += HTTP2Bytes.frame(
                    type: HTTP2Bytes.continuation, flags: HTTP2Bytes.endHeaders, stream: 1, payload: Array(block[16000...]))
                socket.send(bytes)
                let (received, _) = await socket.readUntilClosed(timeout: .seconds(2))
                socket.close()
                let frames = HTTP2Bytes.parseFrames(received)
                let answered = frames.contains {
                    ($0.type == HTTP2Bytes.headers && $0.stream == 1 && $0.flags & HTTP2Bytes.endStream != 0)
                        || ($0.type == 3 && $0.stream == 1) || $0.type == HTTP2Bytes.goAway
                }
                #expect(answered, "no response, RST_STREAM or GOAWAY for stream 1; frames: \(frames)")
                try await Self.expectServing(live)
            }
        }

        @Test("a call whose metadata exceeds 16 KiB is RESOURCE_EXHAUSTED and the client's connection survives")
        func oversizedMetadata() async throws {
            try await withLiveServer { live in
                var metadata = Metadata()
                metadata.add("x-pad", String(repeating: "p", count: 20 * 1024))
                await expectRPCError(.resourceExhausted) {
                    try await live.client.unary(
                        EchoContract.unary, TextMessage(text: "x"), options: CallOptions(metadata: metadata, timeout: .seconds(5)))
                }
                let next = try await live.client.unary(EchoContract.unary, TextMessage(text: "next"))
                #expect(next.text == "next")
            }
        }

        @Test("request metadata too large for nghttp2 to send fails that call alone: no RST_STREAM for a stream never opened")
        func unsendableRequestHeaders() async throws {
            try await withLiveServer { live in
                // A call in flight on the same connection: it must not be failed with the bad one.
                let client = live.client
                let other = Task { try await client.unary(EchoContract.sleep, SleepRequest(millis: 800), options: CallOptions(timeout: .seconds(10))) }
                try await Task.sleep(for: .milliseconds(100))
                var metadata = Metadata()
                metadata.add("x-pad", String(repeating: "p", count: 100 * 1024))  // past nghttp2's 64 KiB
                let (failure, elapsed) = await timed {
                    do {
                        _ = try await live.client.unary(
                            EchoContract.unary, TextMessage(text: "x"), options: CallOptions(metadata: metadata, timeout: .seconds(5)))
                        return nil as RPCError?
                    } catch {
                        return error as? RPCError
                    }
                }
                #expect(failure != nil && failure?.code != .deadlineExceeded, "\(String(describing: failure)) after \(elapsed)")
                #expect(try await other.value.text == "slept", "the call in flight beside it failed")
                let next = try await live.client.unary(EchoContract.unary, TextMessage(text: "next"))
                #expect(next.text == "next")
            }
        }

        @Test("content-type text/plain is answered with HTTP 415 (via the nghttp CLI)")
        func unsupportedMediaType() async throws {
            let nghttp = "/usr/bin/nghttp"
            guard FileManager.default.isExecutableFile(atPath: nghttp) else {
                Issue.record("nghttp is required for this test: install it with `apt-get install nghttp2-client`")
                return
            }
            try await withLiveServer { live in
                let body = FileManager.default.temporaryDirectory.appendingPathComponent("rpchttp2-415-\(UUID().uuidString).txt")
                try Data("hello".utf8).write(to: body)
                defer { try? FileManager.default.removeItem(at: body) }
                let result = try await ChildProcess.run(
                    executable: nghttp,
                    arguments: ["-v", "-H", "content-type: text/plain", "-d", body.path,
                                "http://127.0.0.1:\(live.port)\(EchoContract.unary.path)"],
                    timeout: .seconds(10))
                #expect(result.output.contains(":status: 415"), "nghttp output:\n\(result.output)")
                try await Self.expectServing(live)
            }
        }
    }
}

extension Result where Failure == any Error {
    /// Captures the outcome of an async throwing body.
    init(awaiting body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
