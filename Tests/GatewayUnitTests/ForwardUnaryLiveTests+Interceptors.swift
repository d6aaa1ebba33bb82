import Foundation
@testable import gateway
import RPC
import RPCHTTP2
import Testing

// The gateway's interceptors on forwarded unary calls.
extension ForwardUnaryLiveTests {
    @Test("the rate limit applies to forwarded unary calls before any reaches the upstream")
    func rateLimit() async throws {
        try await Self.withUpstreamAndGateway(rateLimit: (0.001, 2)) { gateway, log in
            for index in 0..<2 {
                let answer = try await gateway.client.unary(NoteContract.get, Note(text: "\(index)"), options: Self.options)
                #expect(answer.text == "\(index)")
            }
            for method in [NoteContract.get, NoteContract.put] {
                await Self.expectError(.resourceExhausted, reason: "RATE_LIMITED") {
                    try await gateway.client.unary(method, Note(text: "over"), options: Self.options)
                }
            }
            #expect(log.calls("Get") == 2)
            #expect(log.calls("Put") == 0)
        }
    }

    @Test("the admin key applies to forwarded unary admin calls: missing and wrong keys never reach the upstream")
    func adminKey() async throws {
        try await Self.withUpstreamAndGateway(adminKey: "right") { gateway, log in
            let client = gateway.client
            await Self.expectError(.unauthenticated, reason: "MISSING_API_KEY") {
                try await client.unary(NoteContract.adminPut, Note(text: "x"), options: Self.options)
            }
            await Self.expectError(.permissionDenied, reason: "INVALID_API_KEY") {
                try await client.unary(
                    NoteContract.adminPut, Note(text: "x"), options: CallOptions(metadata: [MetadataKey.apiKey: "wrong"], timeout: .seconds(10)))
            }
            #expect(log.calls("AdminPut") == 0)
            let admitted = try await client.unary(
                NoteContract.adminPut, Note(text: "in"), options: CallOptions(metadata: [MetadataKey.apiKey: "right"], timeout: .seconds(10)))
            #expect(admitted.text == "in")
            #expect(log.calls("AdminPut") == 1)
            // Methods that are not admin need no key.
            let open = try await client.unary(NoteContract.put, Note(text: "open"), options: Self.options)
            #expect(open.text == "open")
        }
    }
}
