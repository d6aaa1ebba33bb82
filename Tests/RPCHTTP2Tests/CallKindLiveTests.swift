import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

extension LiveTests {
    /// Every RPC kind over real loopback sockets, with our own client.
    @Suite("Call kinds over loopback")
    struct CallKindLiveTests {
        @Test("a unary call echoes its text, unicode included, whether its handler starts on the loop or the pool",
              arguments: [64 * 1024, 0])
        func unary(inlineStartLimit: Int) async throws {
            try await withLiveServer(configure: { $0.inlineStartLimit = inlineStartLimit }) { live in
                let response = try await live.client.unary(EchoContract.unary, TextMessage(text: "héllo ✓ 世界"))
                #expect(response == TextMessage(text: "héllo ✓ 世界"))
                let empty = try await live.client.unary(EchoContract.unary, TextMessage(text: ""))
                #expect(empty == TextMessage(text: ""))
                await expectRPCError(.notFound, reason: "PRODUCT_NOT_FOUND") {
                    try await live.client.unary(EchoContract.unary, TextMessage(text: "fail:NOT_FOUND:PRODUCT_NOT_FOUND"))
                }
                let slept = try await live.client.unary(EchoContract.sleep, SleepRequest(millis: 20))
                #expect(slept.text == "slept")  // a handler that suspends, then finishes on the pool
            }
        }

        @Test("custom metadata reaches the handler")
        func metadata() async throws {
            try await withLiveServer { live in
                let options = CallOptions(metadata: [MetadataKey.requestID: "live-test-1"])
                let response = try await live.client.unary(EchoContract.unary, TextMessage(text: "metadata"), options: options)
                #expect(response.text == "live-test-1")
            }
        }

        @Test("a request id given apart from the metadata reaches the handler, in place of the metadata's own")
        func requestIDApart() async throws {
            try await withLiveServer { live in
                var options = CallOptions(metadata: [MetadataKey.requestID: "from-metadata"])
                options.requestID = RequestID("apart-1")
                let response = try await live.client.unary(EchoContract.unary, TextMessage(text: "metadata"), options: options)
                #expect(response.text == "apart-1")
            }
        }

        @Test("a call's response headers are the content type the server answered with")
        func responseHeaders() async throws {
            try await withLiveServer { live in
                let call = try live.client.makeCall(path: EchoContract.unary.path, options: CallOptions(timeout: .seconds(5)))
                try await call.send(try JSONCodec.shared.encode(TextMessage(text: "headers")))
                call.finishSending()
                let headers = try await call.responseHeaders()
                #expect(headers["content-type"] == "application/grpc+json")
                #expect(headers.count == 1)
                #expect(call.hasResponseHeaders)
                while try await call.nextMessage() != nil {}
                #expect(try await call.responseHeaders() == headers)  // asked again after the end: the same
            }
        }

        @Test("a call that ended without headers (a Trailers-Only OK) answers its response headers as none")
        func responseHeadersOfTrailersOnly() async throws {
            try await withLiveServer { live in
                // No message and an OK status: the server answers with one HEADERS frame that ends the stream.
                let call = try live.client.makeCall(path: EchoContract.serverStream.path, options: CallOptions(timeout: .seconds(5)))
                try await call.send(try JSONCodec.shared.encode(StreamRequest(text: "s", count: 0)))
                call.finishSending()
                #expect(try await call.nextMessage() == nil)
                #expect(!call.hasResponseHeaders)
                // Asked only after the end; it used to wait for headers that never come.
                let answer = Mutex<Metadata?>(nil)
                Task { let headers = try await call.responseHeaders(); answer.withLock { $0 = headers } }
                #expect(await eventually(within: .seconds(5), every: .milliseconds(10)) { answer.withLock { $0 != nil } })
                #expect(answer.withLock { $0 } == Metadata())
            }
        }

        @Test("a server-streaming call delivers every message in order, or none", arguments: [5, 0])
        func serverStreaming(count: Int) async throws {
            try await withLiveServer { live in
                let responses = try await live.client.collect(EchoContract.serverStream, StreamRequest(text: "s", count: count))
                #expect(responses.map(\.text) == (0..<count).map { "s-\($0)" })
            }
        }

        @Test("a client-streaming call sees every request before answering")
        func clientStreaming() async throws {
            try await withLiveServer { live in
                let response = try await live.client.clientStreaming(EchoContract.clientStream) { sender in
                    for text in ["a", "b", "c"] { try await sender.send(TextMessage(text: text)) }
                }
                #expect(response == JoinedTexts(text: "a,b,c", count: 3))
            }
        }

        @Test("a client-streaming call with no requests answers with an empty join")
        func clientStreamingEmpty() async throws {
            try await withLiveServer { live in
                let response = try await live.client.clientStreaming(EchoContract.clientStream) { _ in }
                #expect(response == JoinedTexts(text: "", count: 0))
            }
        }

        @Test("a bidirectional call interleaves: each echo arrives before the next request is sent")
        func bidirectionalInterleaved() async throws {
            try await withLiveServer { live in
                let (acknowledgements, acknowledge) = AsyncStream<Void>.makeStream()
                // A server that waited for the half-close before answering would hang here, so the
                // deadline turns that into a failure.
                let texts = try await live.client.bidirectional(
                    EchoContract.bidi, options: CallOptions(timeout: .seconds(5)),
                    requests: { sender in
                        var echoed = acknowledgements.makeAsyncIterator()
                        for index in 0..<4 {
                            try await sender.send(TextMessage(text: "b\(index)"))
                            guard await echoed.next() != nil else { return }
                        }
                    },
                    responses: { responses in
                        var texts: [String] = []
                        for try await response in responses {
                            texts.append(response.text)
                            acknowledge.yield()
                        }
                        acknowledge.finish()
                        return texts
                    })
                #expect(texts == ["b0", "b1", "b2", "b3"])
            }
        }

        @Test("1000 concurrent unary calls on one client all succeed")
        func thousandConcurrentCalls() async throws {
            try await withLiveServer { live in
                let client = live.client
                let mismatches = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for index in 0..<1000 {
                        group.addTask {
                            let text = "concurrent-\(index)"
                            let response = try await client.unary(EchoContract.unary, TextMessage(text: text))
                            return response.text == text
                        }
                    }
                    var mismatches = 0
                    for try await matched in group where !matched { mismatches += 1 }
                    return mismatches
                }
                #expect(mismatches == 0)
            }
        }
    }
}
