import Contracts
import Foundation
import Logging
import RPC
import RPCHTTP2
import Synchronization
import Testing

extension LiveTests {
    /// Health and Describe, served by every process from the same router.
    @Suite("Standard services")
    struct StandardServicesLiveTests {
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

        @Test("a passing Health/Check is logged at debug (probes come every second); a failing one and other calls at info")
        func healthChecksLogQuietly() async throws {
            let lines = CapturedLogLines()
            var logger = lines.logger
            logger.logLevel = .debug
            try await withLiveServer(logger: logger) { live in
                _ = try await live.client.unary(HealthContract.check, HealthCheckRequest(service: ""))
                await expectRPCError(.notFound) {
                    try await live.client.unary(HealthContract.check, HealthCheckRequest(service: "no.such.Service"))
                }
                _ = try await live.client.unary(EchoContract.unary, TextMessage(text: "hi"))
                // The server logs a call just after answering it.
                let deadline = ContinuousClock.now + .seconds(5)
                while lines.calls.count < 3 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            }
            let calls = lines.calls
            #expect(calls.map { $0.fields["method"] } == ["/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Check", "/interop.v1.EchoService/Unary"])
            #expect(calls.map(\.level) == [.debug, .info, .info])
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
