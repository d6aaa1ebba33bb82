import Foundation
import RPC
import RPCHTTP2
import Testing

extension LiveTests {
    /// A connection reuses the path and route of its latest request; every request must still
    /// reach its own method, whatever came before it on the connection.
    @Suite("Routing on one connection")
    struct RouteReuseLiveTests {
        @Test("the same, another, an unknown and the first method again, in turn, each get their own answer")
        func alternatingMethods() async throws {
            try await withLiveServer { live in
                for round in 0..<3 {
                    let first = try await live.client.unary(EchoContract.unary, TextMessage(text: "a\(round)"))
                    let second = try await live.client.unary(EchoContract.unary, TextMessage(text: "b\(round)"))
                    #expect(first.text == "a\(round)")
                    #expect(second.text == "b\(round)")
                    await expectRPCError(.unimplemented, reason: "UNKNOWN_METHOD") {
                        try await live.client.unary(EchoContract.unknownMethod, TextMessage(text: "x"))
                    }
                    await expectRPCError(.unimplemented, reason: "UNKNOWN_METHOD") {
                        try await live.client.unary(EchoContract.unknownMethod, TextMessage(text: "x"))
                    }
                    let failed = await expectRPCError(.notFound, reason: "PRODUCT_NOT_FOUND") {
                        try await live.client.unary(EchoContract.unary, TextMessage(text: "fail:NOT_FOUND:PRODUCT_NOT_FOUND"))
                    }
                    #expect(failed?.message == "requested failure")
                    await expectRPCError(.invalidArgument) {
                        try await live.client.unary(FixtureContract.invalidEmail, TextMessage(text: "x"))
                    }
                }
            }
        }

        @Test("interleaved calls of several methods on one connection each reach their own handler")
        func interleaved() async throws {
            try await withLiveServer { live in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<60 {
                        group.addTask {
                            switch index % 3 {
                            case 0:
                                let text = try await live.client.unary(EchoContract.unary, TextMessage(text: "u\(index)")).text
                                #expect(text == "u\(index)")
                            case 1:
                                await expectRPCError(.unimplemented, reason: "UNKNOWN_METHOD") {
                                    try await live.client.unary(EchoContract.unknownService, TextMessage(text: "x"))
                                }
                            default:
                                await expectRPCError(.invalidArgument) {
                                    try await live.client.unary(FixtureContract.invalidEmail, TextMessage(text: "x"))
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }
}
