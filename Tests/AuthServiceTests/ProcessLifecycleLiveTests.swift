import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// The auth-svc process as a whole: what it serves and how it stops (API.md §8).
@Suite("auth-svc process")
struct ProcessLifecycleLiveTests {
    @Test("auth-svc answers health and Describes every AuthService method")
    func healthAndDescribe() async throws {
        try await withLiveAuthService { service in
            let health = try await service.client.unary(HealthContract.check, HealthCheckRequest(), options: service.options())
            #expect(health.status == .serving)
            let described = try await service.client.unary(MetaContract.describe, Empty(), options: service.options())
            let names = described.services.map(\.name)
            #expect(names.contains(AuthContract.service))
            #expect(names.contains("shop.auth.v1.SessionRevocationService"))
            let auth = try #require(described.services.first { $0.name == AuthContract.service })
            #expect(Set(auth.methods.map(\.name)) == Set(AuthContract.all.map(\.method)))
        }
    }

    @Test("auth-svc exits with status 0 after SIGTERM")
    func stopsCleanly() async throws {
        try await withLiveAuthService { service in
            _ = try await service.verifiedSession("ada@example.com")
            let status = await service.stop()
            let lines = try service.log.lines
            #expect(status == 0, "\(service.logTail)")
            #expect(lines.contains { $0.contains("stopped") })
        }
    }

    @Test("the database is in the data directory (or the schema auth on PostgreSQL), and the outbox writes mail files atomically as .eml")
    func dataDirectoryLayout() async throws {
        try await withLiveAuthService { service in
            try await service.signUp("ada@example.com")
            await service.waitForMails(to: "ada@example.com", kind: .verifyEmail, count: 1)
            let files = try FileManager.default.contentsOfDirectory(atPath: service.dataDirectory.path)
            #expect(files.contains("auth.sqlite") == (service.databaseURL == nil))
            #expect(try await service.runSQL("SELECT email FROM users") == "ada@example.com")
            let mailFiles = try FileManager.default.contentsOfDirectory(atPath: service.mailDirectory.path)
            #expect(mailFiles.count == 1)
            #expect(mailFiles.allSatisfy { $0.hasSuffix(".eml") }, "\(mailFiles)")
        }
    }
}
