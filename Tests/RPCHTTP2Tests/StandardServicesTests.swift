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

        @Test("a passing Health/Check is logged at debug (probes come every second); a failing one and other calls at info")
        func healthChecksLogQuietly() async throws {
            let lines = CapturedLogLines()
            var logger = Logger(label: "health-log-test") { _ in lines }
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
            #expect(calls.map(\.method) == ["/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Check", "/interop.v1.EchoService/Unary"])
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

/// A log handler that keeps the per-call lines ("call", with their method) of every level.
final class CapturedLogLines: LogHandler, @unchecked Sendable {
    // Invariant for @unchecked Sendable: `captured` is behind a Mutex; the LogHandler
    // properties are set once, before the logger is shared.
    private let captured = Mutex<[(level: Logger.Level, method: String)]>([])
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.message == "call", case .string(let method)? = event.metadata?["method"] else { return }
        captured.withLock { $0.append((event.level, method)) }
    }

    /// The call lines so far, in order.
    var calls: [(level: Logger.Level, method: String)] { captured.withLock { $0 } }
}
