import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

@testable import shopctl

/// Refreshing the session after `ACCESS_TOKEN_EXPIRED`: once, whoever else is refreshing.
@Suite("SessionRefresher and GatewayClient: one refresh, then a retry with the new token")
struct SessionRefreshTests {
    /// A store in a fresh directory holding the first session.
    private func storeWithSession() throws -> (CredentialsStore, URL) {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-refresh")
        let store = CredentialsStore(paths: ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path]))
        try store.save(StoredCredentials(Session.sample(access: "access-0", refresh: "refresh-0")))
        return (store, root)
    }

    @Test("two concurrent refreshers make exactly one RefreshSession call and both get its tokens")
    func concurrentRefreshersShareOneCall() async throws {
        let (store, root) = try storeWithSession()
        defer { try? FileManager.default.removeItem(at: root) }
        let sessions = RotatingSessions(initial: "refresh-0")
        // Two refreshers with nothing shared but the files, as two processes would be.
        let first = SessionRefresher(store: store, renewer: sessions)
        let second = SessionRefresher(store: CredentialsStore(paths: store.paths), renewer: sessions)
        async let one = first.refresh(after: "access-0")
        async let two = second.refresh(after: "access-0")
        let (a, b) = try await (one, two)
        #expect(sessions.calls == 1)
        #expect(!sessions.revoked)
        #expect(a.accessToken == "access-1" && b.accessToken == "access-1")
        #expect(try store.load()?.refreshToken == "refresh-1")
    }

    @Test("many concurrent refreshers still make one call")
    func manyRefreshers() async throws {
        let (store, root) = try storeWithSession()
        defer { try? FileManager.default.removeItem(at: root) }
        let sessions = RotatingSessions(initial: "refresh-0", latency: .milliseconds(50))
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask { try await SessionRefresher(store: store, renewer: sessions).refresh(after: "access-0").accessToken }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(sessions.calls == 1)
        #expect(tokens == ["access-1"])
    }

    @Test("a sign-in or sign-out while another process refreshes the old session is not undone by that refresh")
    func signInAndOutWaitForARefresh() async throws {
        for signOut in [false, true] {
            let (store, root) = try storeWithSession()
            defer { try? FileManager.default.removeItem(at: root) }
            let sessions = RotatingSessions(initial: "refresh-0", latency: .milliseconds(300))
            // Another process's refresh: it holds the lock while it renews, then saves.
            async let refreshed = SessionRefresher(store: CredentialsStore(paths: store.paths), renewer: sessions)
                .refresh(after: "access-0")
            #expect(await eventually { sessions.calls == 1 })
            if signOut {
                try await store.forgetSession()
            } else {
                try await store.replaceSession(with: StoredCredentials(Session.sample(access: "access-new", refresh: "refresh-new")))
            }
            _ = try await refreshed
            #expect(try store.load()?.accessToken == (signOut ? nil : "access-new"), "signOut: \(signOut)")
        }
    }

    @Test("a refresh after someone else's uses their tokens without calling")
    func alreadyRefreshed() async throws {
        let (store, root) = try storeWithSession()
        defer { try? FileManager.default.removeItem(at: root) }
        try store.save(StoredCredentials(Session.sample(access: "access-7", refresh: "refresh-7")))
        let sessions = RotatingSessions(initial: "refresh-7")
        let renewed = try await SessionRefresher(store: store, renewer: sessions).refresh(after: "access-0")
        #expect(renewed.accessToken == "access-7")
        #expect(sessions.calls == 0)
    }

    @Test("a refused refresh token deletes the credentials and says the session ended")
    func refusedRefreshEndsSession() async throws {
        let (store, root) = try storeWithSession()
        defer { try? FileManager.default.removeItem(at: root) }
        let sessions = RotatingSessions(initial: "some-other-token")
        await #expect(throws: ShopctlError.sessionEnded) {
            try await SessionRefresher(store: store, renewer: sessions).refresh(after: "access-0")
        }
        #expect(try store.load() == nil)
    }

    @Test("an unreachable gateway keeps the credentials for the next try")
    func unavailableKeepsCredentials() async throws {
        struct Down: SessionRenewing {
            func renew(refreshToken: String) async throws -> Session {
                throw RPCError(code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "No connection.")
            }
        }
        let (store, root) = try storeWithSession()
        defer { try? FileManager.default.removeItem(at: root) }
        await #expect(throws: RPCError.self) { try await SessionRefresher(store: store, renewer: Down()).refresh(after: "access-0") }
        #expect(try store.load()?.accessToken == "access-0")
    }

    @Test("an expired access token is refreshed through RefreshSession and the call retried with the new one")
    func clientRefreshesAndRetries() async throws {
        let (store, root) = try storeWithSession()
        defer { try? FileManager.default.removeItem(at: root) }
        let user = UserResponse(user: Session.sample(access: "", refresh: "").user)
        let transport = ScriptedTransport { call, _ in
            switch call.path {
            case AuthContract.refreshSession.path:
                let request = try JSONCodec.shared.decode(RefreshSessionRequest.self, from: call.requests[0])
                guard request.refreshToken == "refresh-0" else { throw AuthReason.refreshTokenReused.error("reused") }
                return [try .json(Session.sample(access: "access-1", refresh: "refresh-1"))]
            default:
                guard call.metadata["authorization"] == "Bearer access-1" else {
                    throw AuthReason.accessTokenExpired.error("The access token has expired.")
                }
                return [try .json(user)]
            }
        }
        let gateway = GatewayClient(transport: transport, store: store, timeout: .seconds(5))
        let reply = try await gateway.unary(AuthContract.getCurrentUser, Empty())
        #expect(reply.message == user)
        #expect(transport.recorded(AuthContract.getCurrentUser.path).map { $0.metadata["authorization"] } == [
            "Bearer access-0", "Bearer access-1",
        ])
        #expect(transport.recorded(AuthContract.refreshSession.path).count == 1)
        // RefreshSession itself carries no bearer token.
        #expect(transport.recorded(AuthContract.refreshSession.path).first?.metadata["authorization"] == nil)
        #expect(try store.load()?.accessToken == "access-1")
    }

    @Test("after a refresh in this process the refreshed session is the one a revocation forgets; a sign-in elsewhere meanwhile survives")
    func revokedAfterRefresh() async throws {
        let (seeded, root) = try storeWithSession()
        defer { try? FileManager.default.removeItem(at: root) }
        let paths = seeded.paths
        for signInElsewhere in [false, true] {
            try seeded.save(StoredCredentials(Session.sample(access: "access-0", refresh: "refresh-0")))
            let transport = ScriptedTransport { call, _ in
                if call.path == AuthContract.refreshSession.path {
                    return [try .json(Session.sample(access: "access-1", refresh: "refresh-1"))]
                }
                guard call.metadata["authorization"] == "Bearer access-1" else {
                    throw AuthReason.accessTokenExpired.error("The access token has expired.")
                }
                // The same user signs out and in again in another process; then this session is revoked.
                if signInElsewhere { try CredentialsStore(paths: paths).save(StoredCredentials(Session.sample(access: "access-9", refresh: "refresh-9"))) }
                throw AuthReason.sessionRevoked.error("The session was revoked.")
            }
            // This process's store: it has read or written nothing yet.
            let store = CredentialsStore(paths: paths)
            let gateway = GatewayClient(transport: transport, store: store, timeout: .seconds(5))
            await #expect(throws: RPCError.self) { try await gateway.unary(BasketContract.getBasket, Empty()) }
            try await store.forgetSessionInUse()
            #expect(try seeded.load()?.refreshToken == (signInElsewhere ? "refresh-9" : nil), "sign-in elsewhere: \(signInElsewhere)")
        }
    }

    @Test("a failed refresh during a call ends the session: credentials deleted, the call not repeated")
    func clientFailedRefresh() async throws {
        let (store, root) = try storeWithSession()
        defer { try? FileManager.default.removeItem(at: root) }
        let transport = ScriptedTransport { call, _ in
            if call.path == AuthContract.refreshSession.path {
                throw AuthReason.invalidRefreshToken.error("The refresh token is not valid.")
            }
            throw AuthReason.accessTokenExpired.error("The access token has expired.")
        }
        let gateway = GatewayClient(transport: transport, store: store, timeout: .seconds(5))
        await #expect(throws: ShopctlError.sessionEnded) { try await gateway.unary(BasketContract.getBasket, Empty()) }
        #expect(try store.load() == nil)
        #expect(transport.recorded(BasketContract.getBasket.path).count == 1)
    }

    @Test("a token that stays expired after one refresh is reported, not refreshed again")
    func refreshesOnlyOnce() async throws {
        let (store, root) = try storeWithSession()
        defer { try? FileManager.default.removeItem(at: root) }
        let transport = ScriptedTransport { call, number in
            if call.path == AuthContract.refreshSession.path {
                return [try .json(Session.sample(access: "access-\(number)", refresh: "refresh-\(number)"))]
            }
            throw AuthReason.accessTokenExpired.error("The access token has expired.")
        }
        let gateway = GatewayClient(transport: transport, store: store, timeout: .seconds(5))
        await #expect(throws: RPCError.self) { try await gateway.unary(BasketContract.getBasket, Empty()) }
        #expect(transport.recorded(AuthContract.refreshSession.path).count == 1)
        #expect(transport.recorded(BasketContract.getBasket.path).count == 2)
    }

    @Test("a user method without stored credentials is not sent at all")
    func notSignedIn() async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-refresh")
        defer { try? FileManager.default.removeItem(at: root) }
        let transport = ScriptedTransport { _, _ in [] }
        let gateway = GatewayClient(
            transport: transport, store: CredentialsStore(paths: ConfigPaths(environment: ["XDG_CONFIG_HOME": root.path])),
            timeout: .seconds(5))
        await #expect(throws: ShopctlError.notSignedIn) { try await gateway.unary(BasketContract.getBasket, Empty()) }
        #expect(transport.recorded.isEmpty)
        // A public method goes out without authorization, with a deadline.
        _ = try? await gateway.unary(CatalogContract.listCategories, Empty())
        #expect(transport.recorded.first?.metadata["authorization"] == nil)
        #expect(transport.recorded.first?.hasDeadline == true)
    }
}
