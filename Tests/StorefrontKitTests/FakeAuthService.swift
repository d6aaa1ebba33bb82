import Contracts
import Foundation
import RPC
@testable import StorefrontKit
import Synchronization

/// auth-svc as far as a session's refresh goes, served in this process: `RefreshSession`
/// rotates the refresh token (counting every call, refusing a token used before as
/// `REFRESH_TOKEN_REUSED`) and `GetCurrentUser` accepts only the latest access token of a refreshed session; `SignOut` answers
/// that the session was revoked already. A
/// ``StorefrontClient`` calls it through an `InProcessTransport` — what the client does with
/// tokens, without a server process. Thread-safe.
final class FakeAuthService: Sendable {
    private struct State {
        var generation = 0
        var refreshCalls = 0
        var usedRefreshTokens: Set<String> = []
        /// When set, every refresh is refused with this reason.
        var refusal: String?
    }

    private let state = Mutex(State())
    /// The one user.
    let user = User(id: "user-1", email: "fake@example.com", emailVerified: true, providers: ["password"], createdAt: "2026-01-01T00:00:00Z")
    /// How long a refresh takes to answer (so that waiting calls pile up behind it).
    let refreshDelay: Duration

    /// A fake answering refreshes after `refreshDelay`.
    init(refreshDelay: Duration = .milliseconds(100)) {
        self.refreshDelay = refreshDelay
    }

    /// The access token of generation `generation`.
    static func accessToken(_ generation: Int) -> String { "access-\(generation)" }
    /// The refresh token of generation `generation`.
    static func refreshToken(_ generation: Int) -> String { "refresh-\(generation)" }

    /// How many `RefreshSession` calls arrived.
    var refreshCalls: Int { state.withLock { $0.refreshCalls } }

    /// Refuses every later refresh with `reason` (`UNAUTHENTICATED`).
    func refuseRefreshes(_ reason: String) { state.withLock { $0.refusal = reason } }

    /// The session stored by a client that signed in at generation 0, its access token
    /// expiring at `expiresAt`.
    func storedSession(expiresAt: Date) -> StoredSession {
        StoredSession(
            accessToken: Self.accessToken(0), refreshToken: Self.refreshToken(0), accessTokenExpiresAt: expiresAt, user: user)
    }

    /// A client of this fake keeping its session in `store`.
    func client(store: any CredentialStore) -> StorefrontClient {
        var configuration = StorefrontConfiguration()
        configuration.credentialStore = store
        return StorefrontClient(
            baseURL: URL(string: "http://fake.invalid")!, configuration: configuration,
            transport: InProcessTransport(router: router()))
    }

    private func router() -> Router {
        var router = Router()
        router.unary(AuthContract.refreshSession) { request, _ in try await self.refresh(request.refreshToken) }
        router.unary(AuthContract.getCurrentUser) { _, context in
            // Generation 0's token (the stored session's) has expired by the server's clock.
            let generation = self.state.withLock { $0.generation }
            guard generation > 0, context.metadata[MetadataKey.authorization] == "Bearer \(Self.accessToken(generation))" else {
                throw RPCError(code: .unauthenticated, reason: "ACCESS_TOKEN_EXPIRED", message: "The access token expired.")
            }
            return UserResponse(user: self.user)
        }
        router.unary(AuthContract.signOut) { _, _ -> Empty in
            throw RPCError(code: .unauthenticated, reason: "SESSION_REVOKED", message: "The session was revoked.")
        }
        return router
    }

    private func refresh(_ token: String) async throws -> Session {
        let refusal = state.withLock { state -> String? in
            state.refreshCalls += 1
            if let refusal = state.refusal { return refusal }
            return state.usedRefreshTokens.insert(token).inserted ? nil : "REFRESH_TOKEN_REUSED"
        }
        try await Task.sleep(for: refreshDelay)
        if let refusal { throw RPCError(code: .unauthenticated, reason: refusal, message: "Refused.") }
        let generation = state.withLock { state in
            state.generation += 1
            return state.generation
        }
        return Session(
            accessToken: Self.accessToken(generation), refreshToken: Self.refreshToken(generation), expiresIn: 900, user: user)
    }
}
