import Foundation
import RPC
import RPCHTTP2
import Testing
import JSON

extension LiveTests {
    /// Statuses, reasons, messages and details as the client receives them.
    @Suite("Errors over loopback")
    struct ErrorLiveTests {
        @Test("a handler's error arrives with its code, reason and message")
        func codeReasonAndMessage() async throws {
            try await withLiveServer { live in
                let error = await expectRPCError(.notFound, reason: "PRODUCT_NOT_FOUND") {
                    try await live.client.unary(EchoContract.unary, TextMessage(text: "fail:NOT_FOUND:PRODUCT_NOT_FOUND"))
                }
                #expect(error?.message == "requested failure")
                #expect(error?.details == nil)
            }
        }

        @Test("a message with non-ASCII, percent signs and newlines round-trips through grpc-message")
        func messageEncoding() async throws {
            try await withLiveServer { live in
                let message = "100% sûr ✓\nline two"
                let error = await expectRPCError(.failedPrecondition, reason: "AS_REQUESTED") {
                    try await live.client.unary(FixtureContract.failWithMessage, TextMessage(text: message))
                }
                #expect(error?.message == message)
            }
        }

        @Test("a message that ends in a space arrives whole: the space is percent-encoded, not sent bare")
        func trailingSpace() async throws {
            try await withLiveServer { live in
                // Sent bare, nghttp2 refused the trailers (RFC 9113 §8.2.1) and reset the stream.
                let message = "unknown sort 'PRICE_ASC '"
                let error = await expectRPCError(.failedPrecondition, reason: "AS_REQUESTED") {
                    try await live.client.unary(FixtureContract.failWithMessage, TextMessage(text: message + " "))
                }
                #expect(error?.message == message + " ")
            }
        }

        @Test("a 200 KB message is answered, cut to 1 KiB: too long, the trailers were never sent and the call hung")
        func longMessage() async throws {
            try await withLiveServer { live in
                let message = String(repeating: "é", count: 100_000)
                let error = await expectRPCError(.failedPrecondition, reason: "AS_REQUESTED") {
                    try await live.client.unary(
                        FixtureContract.failWithMessage, TextMessage(text: message), options: CallOptions(timeout: .seconds(5)))
                }
                let received = try #require(error?.message)
                #expect(received.utf8.count <= RPCError.maximumTrailerMessageBytes && received.hasSuffix("…"))
                #expect(message.hasPrefix(received.dropLast()))
            }
        }

        @Test("a compressed message without a grpc-encoding is UNIMPLEMENTED COMPRESSION_NOT_NEGOTIATED (API.md §1)")
        func compressedWithoutEncoding() async throws {
            try await withLiveServer { live in
                let body = FileManager.default.temporaryDirectory.appendingPathComponent("compressed-\(UUID().uuidString).bin")
                try Data([1, 0, 0, 0, 2, 0x7B, 0x7D]).write(to: body)  // flag 1, then "{}"
                defer { try? FileManager.default.removeItem(at: body) }
                let result = try await ChildProcess.run(
                    executable: "/usr/bin/nghttp",
                    arguments: ["-v", "-H", "content-type: application/grpc+json", "-H", "te: trailers", "-d", body.path,
                                "http://127.0.0.1:\(live.port)\(EchoContract.unary.path)"],
                    timeout: .seconds(10))
                #expect(result.output.contains("grpc-status: 12"), "nghttp output:\n\(result.output)")
                #expect(result.output.contains("COMPRESSION_NOT_NEGOTIATED"), "nghttp output:\n\(result.output)")
            }
        }

        @Test("error details round-trip: fieldViolations of invalidField")
        func details() async throws {
            try await withLiveServer { live in
                let error = await expectRPCError(.invalidArgument) {
                    try await live.client.unary(FixtureContract.invalidEmail, TextMessage(text: "x"))
                }
                #expect(error?.message == "email: is invalid")
                let violations = error?.details?["fieldViolations"]?.arrayValue
                #expect(violations?.count == 1)
                #expect(violations?.first?["field"]?.stringValue == "email")
                #expect(violations?.first?["description"]?.stringValue == "is invalid")
            }
        }

        @Test("an error from a server-streaming handler ends the stream with its status")
        func streamingError() async throws {
            try await withLiveServer { live in
                await expectRPCError(.invalidArgument, reason: "MALFORMED_MESSAGE") {
                    try await live.client.collect(EchoContract.serverStream, StreamRequest(text: "s", count: -1))
                }
            }
        }

        @Test("an unknown method and an unknown service are UNIMPLEMENTED")
        func unknownMethodAndService() async throws {
            try await withLiveServer { live in
                await expectRPCError(.unimplemented) {
                    try await live.client.unary(EchoContract.unknownMethod, TextMessage(text: "x"))
                }
                await expectRPCError(.unimplemented) {
                    try await live.client.unary(EchoContract.unknownService, TextMessage(text: "x"))
                }
                // The connection is still fine afterwards.
                let next = try await live.client.unary(EchoContract.unary, TextMessage(text: "ok"))
                #expect(next.text == "ok")
            }
        }

        @Test("a request that is not JSON is INVALID_ARGUMENT with reason MALFORMED_MESSAGE")
        func malformedJSON() async throws {
            try await withLiveServer { live in
                await expectRPCError(.invalidArgument, reason: "MALFORMED_MESSAGE") {
                    try await live.client.withCall(path: EchoContract.unary.path, options: CallOptions(timeout: .seconds(5))) { call in
                        try await call.send(Data("not json".utf8))
                        call.finishSending()
                        return try await call.nextMessage()
                    }
                }
            }
        }

        @Test("a field of the wrong type is INVALID_ARGUMENT naming the field")
        func wrongFieldType() async throws {
            try await withLiveServer { live in
                let error = await expectRPCError(.invalidArgument, reason: "MALFORMED_MESSAGE") {
                    try await live.client.withCall(path: EchoContract.serverStream.path, options: CallOptions(timeout: .seconds(5))) { call in
                        try await call.send(Data(#"{"text":"s","count":"five"}"#.utf8))
                        call.finishSending()
                        return try await call.nextMessage()
                    }
                }
                #expect(error?.details?["fieldViolations"]?.arrayValue?.first?["field"]?.stringValue == "count")
            }
        }

        @Test("a unary call with zero request messages is UNIMPLEMENTED")
        func unaryWithoutRequest() async throws {
            try await withLiveServer { live in
                await expectRPCError(.unimplemented) {
                    try await live.client.withCall(path: EchoContract.unary.path, options: CallOptions(timeout: .seconds(5))) { call in
                        call.finishSending()
                        return try await call.nextMessage()
                    }
                }
            }
        }

        @Test("a unary call with two request messages is UNIMPLEMENTED")
        func unaryWithTwoRequests() async throws {
            try await withLiveServer { live in
                await expectRPCError(.unimplemented) {
                    try await live.client.withCall(path: EchoContract.unary.path, options: CallOptions(timeout: .seconds(5))) { call in
                        try await call.send(Data(#"{"text":"one"}"#.utf8))
                        try await call.send(Data(#"{"text":"two"}"#.utf8))
                        call.finishSending()
                        return try await call.nextMessage()
                    }
                }
            }
        }
    }
}
