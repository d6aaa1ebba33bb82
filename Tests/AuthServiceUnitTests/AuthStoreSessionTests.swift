@testable import auth_svc
import Credentials
import Testing

/// `AuthStore`'s sessions: refresh-token rotation and reuse detection, expiry, revocation,
/// the revocation feed and pruning — every instant passed explicitly through `now:`.
@Suite("AuthStore: sessions and the revocation feed")
struct AuthStoreSessionTests {
    private let epoch = AuthStore.testEpoch

    /// A fresh refresh-token hash, as the handlers store them.
    private func freshHash() -> String { OpaqueToken.hash(OpaqueToken.generate()) }

    @Test("a new session lives 30 days and is found by id")
    func createSession() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let (session, _) = try await store.makeSession(for: user.id)
            #expect(session.userID == user.id)
            #expect(session.authenticatedAt == epoch)
            #expect(session.expiresAt == epoch + 30 * 24 * 3600)
            #expect(session.revokedAt == nil)
            #expect(try await store.session(id: session.id) == session)
        }
    }

    @Test("a refresh token rotates once; replaying it revokes the session, and the new token dies with it")
    func rotationAndReuse() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let (session, firstHash) = try await store.makeSession(for: user.id)
            let secondHash = freshHash()

            guard case .rotated(let rotated, let owner) = try await store.rotateRefreshToken(
                hash: firstHash, newHash: secondHash, now: epoch + 60)
            else {
                Issue.record("the current refresh token did not rotate")
                return
            }
            #expect(rotated.id == session.id)
            #expect(owner.id == user.id)

            guard case .reused(let reusedID) = try await store.rotateRefreshToken(
                hash: firstHash, newHash: freshHash(), now: epoch + 120)
            else {
                Issue.record("a replayed refresh token was not detected")
                return
            }
            #expect(reusedID == session.id)
            #expect(try await store.session(id: session.id)?.revokedAt == epoch + 120)

            guard case .invalid = try await store.rotateRefreshToken(hash: secondHash, newHash: freshHash(), now: epoch + 180)
            else {
                Issue.record("the newer token of a revoked session still rotated")
                return
            }
        }
    }

    @Test("an unknown refresh token is invalid")
    func unknownToken() async throws {
        try await AuthStore.withFresh { store in
            guard case .invalid = try await store.rotateRefreshToken(hash: freshHash(), newHash: freshHash(), now: epoch)
            else {
                Issue.record("an unknown token was accepted")
                return
            }
        }
    }

    @Test(
        "a session's refresh token works until the session expires",
        arguments: [(30 * 24 * 3600 - 1, true), (30 * 24 * 3600, false), (40 * 24 * 3600, false)] as [(Int64, Bool)])
    func expiry(age: Int64, usable: Bool) async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let (_, hash) = try await store.makeSession(for: user.id)
            let outcome = try await store.rotateRefreshToken(hash: hash, newHash: freshHash(), now: epoch + age)
            if case .rotated = outcome {
                #expect(usable)
            } else {
                #expect(!usable)
            }
        }
    }

    @Test("revoking a user's sessions can spare one, and each revocation enters the feed in order")
    func revokeExceptAndFeed() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let (kept, _) = try await store.makeSession(for: user.id)
            let (a, _) = try await store.makeSession(for: user.id)
            let (b, _) = try await store.makeSession(for: user.id)

            let (before, startSequence) = try await store.revocations(after: 0, now: epoch)
            #expect(before.isEmpty)
            #expect(startSequence == 0)

            try await store.revokeSession(id: a.id, reason: "sign-out", now: epoch + 1)
            let revoked = try await store.revokeSessions(userID: user.id, except: kept.id, reason: "test", now: epoch + 2)
            #expect(revoked == [b.id])
            #expect(try await store.session(id: kept.id)?.revokedAt == nil)
            #expect(try await store.revokeSession(id: a.id, reason: "again", now: epoch + 3) == false)

            let (feed, last) = try await store.revocations(after: 0, now: epoch + 3)
            #expect(feed.map(\.sessionID) == [a.id, b.id])
            #expect(feed.map(\.revokedAt) == [epoch + 1, epoch + 2])
            #expect(last == 2)

            let (tail, sameLast) = try await store.revocations(after: 1, now: epoch + 3)
            #expect(tail.map(\.sessionID) == [b.id])
            #expect(sameLast == 2)
            let (nothing, lastAgain) = try await store.revocations(after: 2, now: epoch + 3)
            #expect(nothing.isEmpty)
            #expect(lastAgain == 2)
        }
    }

    @Test("the feed keeps revocations for 20 minutes, yet lastSequence still counts the older ones")
    func feedRetention() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let (old, _) = try await store.makeSession(for: user.id)
            let (recent, _) = try await store.makeSession(for: user.id)
            try await store.revokeSession(id: old.id, reason: "test", now: epoch)
            try await store.revokeSession(id: recent.id, reason: "test", now: epoch + 300)

            let (atTheEdge, _) = try await store.revocations(after: 0, now: epoch + 20 * 60)
            #expect(atTheEdge.map(\.sessionID) == [old.id, recent.id])
            let (later, last) = try await store.revocations(after: 0, now: epoch + 20 * 60 + 1)
            #expect(later.map(\.sessionID) == [recent.id])
            #expect(last == 2)
        }
    }

    @Test("a full page of the feed reports its own last sequence so the reader can continue")
    func feedPaging() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            var ids: [String] = []
            for offset in 0..<3 {
                let (session, _) = try await store.makeSession(for: user.id)
                try await store.revokeSession(id: session.id, reason: "test", now: epoch + Int64(offset))
                ids.append(session.id)
            }
            let (page, last) = try await store.revocations(after: 0, now: epoch + 5, limit: 2)
            #expect(page.map(\.sessionID) == Array(ids.prefix(2)))
            #expect(last == 2)
            let (rest, end) = try await store.revocations(after: last, now: epoch + 5, limit: 2)
            #expect(rest.map(\.sessionID) == [ids[2]])
            #expect(end == 3)
        }
    }

    @Test("pruning drops old feed entries and long-expired sessions, and nothing current")
    func prune() async throws {
        try await AuthStore.withFresh { store in
            let user = try await store.makePasswordUser("ada@example.com")
            let (expired, _) = try await store.makeSession(for: user.id, now: epoch)
            let (live, _) = try await store.makeSession(for: user.id, now: epoch + 29 * 24 * 3600)
            let (revoked, _) = try await store.makeSession(for: user.id, now: epoch + 29 * 24 * 3600)
            try await store.revokeSession(id: revoked.id, reason: "test", now: epoch + 29 * 24 * 3600)

            let now = expired.expiresAt + 20 * 60 + 1
            try await store.pruneSessions(now: now)
            #expect(try await store.session(id: expired.id) == nil)
            #expect(try await store.session(id: live.id) != nil)
            #expect(try await store.session(id: revoked.id) != nil)
            let (feed, _) = try await store.revocations(after: 0, now: now)
            #expect(feed.isEmpty)
        }
    }
}
