import Contracts
import Foundation
import RPC
import RPCHTTP2
import Testing

extension LiveTests {
    /// Health and Describe, served by every process from the same router.
    @Suite("Standard services")
    struct StandardServicesTests {
        @Test("Health/Check answers SERVING for the whole process")
        func healthCheck() async throws {
            try await withLiveServer { live in
                let response = try await live.client.unary(HealthContract.check, HealthCheckRequest(service: ""))
                #expect(response.status == .serving)
                await expectRPCError(.notFound) {
                    try await live.client.unary(HealthContract.check, HealthCheckRequest(service: "no.such.Service"))
                }
            }
        }

        @Test("Describe lists the echo service's methods with their kinds and fields")
        func describe() async throws {
            try await withLiveServer { live in
                let response = try await live.client.unary(MetaContract.describe, Empty())
                let echo = try #require(response.services.first { $0.name == EchoContract.service })
                #expect(echo.methods.map(\.name) == ["Unary", "ServerStream", "ClientStream", "Bidi", "Sleep"])
                #expect(echo.methods.map(\.kind) == [.unary, .serverStreaming, .clientStreaming, .bidirectionalStreaming, .unary])
                #expect(echo.methods.first?.requestFields == [FieldDescriptor("text", "String")])
                #expect(echo.methods.first { $0.name == "ServerStream" }?.requestFields.map(\.name) == ["text", "count"])
                let names = response.services.map(\.name)
                #expect(names.contains(HealthContract.service))
                #expect(names.contains(MetaContract.service))
            }
        }
    }
}
