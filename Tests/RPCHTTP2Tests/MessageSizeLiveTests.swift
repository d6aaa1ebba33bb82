import Foundation
import RPC
import RPCHTTP2
import Testing

extension LiveTests {
    /// Empty, large and oversized messages (limit: 4 MiB, API.md §1).
    @Suite("Message sizes")
    struct MessageSizeLiveTests {
        /// A `TextMessage` whose JSON encoding is exactly `size` bytes: `{"text":"…"}` adds 11.
        static func message(encodedSize size: Int) -> TextMessage {
            TextMessage(text: String(repeating: "a", count: size - 11))
        }

        @Test("an empty (0-byte) message is delivered as an empty message, not as the end")
        func emptyMessage() async throws {
            try await withLiveServer { live in
                let (first, second, end) = try await live.client.withCall(
                    path: FixtureContract.rawEcho.path, options: CallOptions(timeout: .seconds(5))
                ) { call in
                    try await call.send(Data())
                    let first = try await call.nextMessage()
                    try await call.send(Data("x".utf8))
                    let second = try await call.nextMessage()
                    call.finishSending()
                    return (first, second, try await call.nextMessage())
                }
                #expect(first == Data())
                #expect(second == Data("x".utf8))
                #expect(end == nil)
            }
        }

        @Test("a 1 MiB unary message echoes intact")
        func oneMebibyte() async throws {
            try await withLiveServer { live in
                let text = String(repeating: "0123456789abcdef", count: mebibyte / 16)
                let response = try await live.client.unary(EchoContract.unary, TextMessage(text: text))
                #expect(response.text.utf8.count == mebibyte)
                #expect(response.text == text)
            }
        }

        @Test("a message of exactly the 4 MiB limit is accepted")
        func exactlyTheLimit() async throws {
            try await withLiveServer { live in
                let request = Self.message(encodedSize: 4 * mebibyte)
                #expect(try JSONCodec.shared.encode(request).count == 4 * mebibyte)
                let response = try await live.client.unary(EchoContract.unary, request)
                #expect(response.text.utf8.count == request.text.utf8.count)
            }
        }

        @Test("a message of 4 MiB + 1 is RESOURCE_EXHAUSTED / MESSAGE_TOO_LARGE, and the connection serves the next call")
        func overTheLimit() async throws {
            try await withLiveServer { live in
                let request = Self.message(encodedSize: 4 * mebibyte + 1)
                #expect(try JSONCodec.shared.encode(request).count == 4 * mebibyte + 1)
                let (_, elapsed) = await timed {
                    await expectRPCError(.resourceExhausted, reason: "MESSAGE_TOO_LARGE") {
                        try await live.client.unary(EchoContract.unary, request, options: CallOptions(timeout: .seconds(10)))
                    }
                }
                #expect(elapsed < .seconds(5))
                let next = try await live.client.unary(EchoContract.unary, TextMessage(text: "still here"))
                #expect(next.text == "still here")
            }
        }
    }
}
