import Contracts
import Credentials
import Foundation
import Logging
import RPC
import RPCHTTP2
@testable import ServiceKit
import ServiceTestSupport
import Synchronization
import Testing

/// `RevocationFeed`: polling auth-svc's revocation feed over a real socket, and the verifier
/// answering `SESSION_REVOKED` for what it lists.
@Suite("Revocation feed")
struct RevocationFeedTests {
    /// A stand-in for auth-svc's `ListRevokedSessions`: serves the revocations a test adds,
    /// checks the internal key, and pages like the real one (two per page). Thread-safe.
    final class FakeFeed: Sendable {
        private let revoked = Mutex<[String]>([])
        /// The requests' `afterSequence` values, in order.
        let requests = Mutex<[Int]>([])

        func revoke(_ sessionID: String) { revoked.withLock { $0.append(sessionID) } }

        func answer(_ request: ListRevokedSessionsRequest) -> ListRevokedSessionsResponse {
            requests.withLock { $0.append(request.afterSequence) }
            let all = revoked.withLock { $0 }
            let page = all.enumerated().filter { $0.offset + 1 > request.afterSequence }.prefix(2)
            return ListRevokedSessionsResponse(
                revocations: page.map { SessionRevocation(sessionId: $0.element, revokedAt: "2026-11-22T00:00:00Z") },
                lastSequence: page.last.map { $0.offset + 1 } ?? max(request.afterSequence, all.count))
        }
    }

    /// Runs `body` with a client of a server serving `feed` under `internalKey`.
    func withFeedServer(
        _ feed: FakeFeed, internalKey: String, _ body: (RPCClient) async throws -> Void
    ) async throws {
        var router = Router()
        router.addInterceptor(APIKeyInterceptor(adminKey: nil, internalKey: internalKey))
        router.unary(SessionRevocationContract.listRevokedSessions) { request, _ in feed.answer(request) }
        var logger = Logger(label: "servicekit-tests")
        logger.logLevel = .critical
        let server = try HTTP2Server(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: router, logger: logger)
        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: try server.start()))
        do {
            try await body(client)
        } catch {
            await client.close()
            await server.shutdown()
            throw error
        }
        await client.close()
        await server.shutdown()
    }

    @Test("a poll learns every revocation, paging until nothing is new, and asks after the last one next time")
    func pollsAndPages() async throws {
        let feed = FakeFeed()
        for id in ["s1", "s2", "s3"] { feed.revoke(id) }
        try await withFeedServer(feed, internalKey: "k") { client in
            let revocations = RevocationFeed(client: client, internalKey: "k", logger: Logger(label: "test"))
            try await revocations.poll()
            #expect(["s1", "s2", "s3"].allSatisfy { revocations.isRevoked(sessionID: $0) })
            #expect(!revocations.isRevoked(sessionID: "s4"))
            feed.revoke("s4")
            try await revocations.poll()
            #expect(revocations.isRevoked(sessionID: "s4"))
        }
        #expect(feed.requests.withLock { $0 } == [0, 2, 3, 3, 4])
    }

    @Test("a wrong internal key fails the poll and leaves nothing revoked")
    func wrongKey() async throws {
        let feed = FakeFeed()
        feed.revoke("s1")
        try await withFeedServer(feed, internalKey: "right") { client in
            let revocations = RevocationFeed(client: client, internalKey: "wrong", logger: Logger(label: "test"))
            let answer = await rpcReason { try await revocations.poll() }
            #expect(answer?.reason == APIKeyReason.invalidAPIKey.rawValue)
            #expect(!revocations.isRevoked(sessionID: "s1"))
        }
    }

    @Test("the verifier answers SESSION_REVOKED for a session the feed lists, and accepts others")
    func verifierRefusesRevokedSessions() async throws {
        let key = try AuthFixture.makeKey()
        let feed = FakeFeed()
        try await withFeedServer(feed, internalKey: "k") { client in
            let revocations = RevocationFeed(
                client: client, internalKey: "k", interval: .milliseconds(50), logger: Logger(label: "test"))
            let verifier = AccessTokenVerifier(
                issuer: AuthFixture.issuer, audience: AuthFixture.audience,
                source: FakeKeySource(publishing: [key]).source, revocations: revocations)
            let token = try AuthFixture.token(signedWith: key)  // session "session-1"
            _ = try await verifier.authenticate(authorization: "Bearer \(token)")

            let polling = Task { await revocations.run() }
            defer { polling.cancel() }
            feed.revoke("session-1")
            let learned = await eventually { revocations.isRevoked(sessionID: "session-1") }
            #expect(learned, "the running feed picks up a revocation within a few intervals")
            let answer = await rpcReason { _ = try await verifier.authenticate(authorization: "Bearer \(token)") }
            #expect(answer?.code == .unauthenticated)
            #expect(answer?.reason == AuthReason.sessionRevoked.rawValue)
        }
    }
}
