import Contracts
import Foundation
import RPC
@testable import StorefrontKit
import Synchronization

/// basket-svc's `WatchBasket` (and auth-svc's `RefreshSession`) as far as `basket.changes`
/// goes, served in this process and scripted: each `WatchBasket` call plays the next
/// ``Attempt`` — baskets of the given versions, then an ending — and the fake records what the
/// client did: the token of each call, the refreshes, the streams the client cancelled. A
/// ``StorefrontClient`` calls it through an `InProcessTransport`. Thread-safe.
final class FakeBasketWatchService: Sendable {
    /// How one stream ends after its baskets.
    enum Ending: Sendable {
        /// The server ends it OK.
        case ok
        /// The server ends it with an error.
        case fail(RPCError)
        /// It stays open until the client cancels it.
        case open
    }

    /// What one `WatchBasket` call does.
    struct Attempt: Sendable {
        /// The versions of the baskets it sends, in order.
        var versions: [Int]
        /// How it ends.
        var ending: Ending

        /// Sends `versions`, then ends as `ending` says.
        init(_ versions: [Int], _ ending: Ending) {
            self.versions = versions
            self.ending = ending
        }
    }

    private struct State {
        var script: [Attempt]
        var tokens: [String?] = []
        var sent = 0
        var cancelledStreams = 0
        var refreshCalls = 0
        var refusesRefreshes = false
    }

    private let state: Mutex<State>
    /// The one user.
    let user = User(id: "user-1", email: "fake@example.com", emailVerified: true, providers: ["password"], createdAt: "2026-01-01T00:00:00Z")

    /// A fake whose `WatchBasket` calls play `script` in turn; calls past its end stay open.
    init(_ script: [Attempt]) {
        state = Mutex(State(script: script))
    }

    /// The `authorization` of each `WatchBasket` call, in order.
    var tokens: [String?] { state.withLock { $0.tokens } }
    /// How many `WatchBasket` calls arrived.
    var attempts: Int { state.withLock { $0.tokens.count } }
    /// How many baskets were sent in all.
    var sent: Int { state.withLock { $0.sent } }
    /// How many open streams the client cancelled.
    var cancelledStreams: Int { state.withLock { $0.cancelledStreams } }
    /// How many `RefreshSession` calls arrived.
    var refreshCalls: Int { state.withLock { $0.refreshCalls } }

    /// Refuses every later refresh as `INVALID_REFRESH_TOKEN` (the session ended on the server).
    func refuseRefreshes() { state.withLock { $0.refusesRefreshes = true } }

    /// A basket at `version`.
    static func basket(version: Int) -> Basket {
        Basket(items: [], itemCount: 0, total: Money(amount: 0, currency: "USD"), version: version, updatedAt: "2026-01-01T00:00:00Z")
    }

    /// A client of this fake, signed in (generation 0 tokens, good by the clock) unless `signedIn` is false.
    func client(signedIn: Bool = true) -> StorefrontClient {
        var configuration = StorefrontConfiguration()
        configuration.credentialStore = MemoryCredentialStore(
            signedIn
                ? StoredSession(accessToken: "access-0", refreshToken: "refresh-0", accessTokenExpiresAt: Date() + 600, user: user)
                : nil)
        return StorefrontClient(
            baseURL: URL(string: "http://fake.invalid")!, configuration: configuration,
            transport: InProcessTransport(router: router()))
    }

    private func router() -> Router {
        var router = Router()
        router.unary(AuthContract.refreshSession) { _, _ in try self.refresh() }
        router.serverStreaming(BasketContract.watchBasket) { _, writer, context in
            try await self.play(writer, token: context.metadata[MetadataKey.authorization])
        }
        return router
    }

    /// Plays the next attempt of the script.
    private func play(_ writer: ResponseWriter<Basket>, token: String?) async throws {
        let attempt = state.withLock { state in
            state.tokens.append(token)
            return state.script.isEmpty ? Attempt([], .open) : state.script.removeFirst()
        }
        for version in attempt.versions {
            try await writer.write(Self.basket(version: version))
            state.withLock { $0.sent += 1 }
        }
        switch attempt.ending {
        case .ok: return
        case .fail(let error): throw error
        case .open:
            do {
                try await Task.sleep(for: .seconds(3600))
            } catch {
                state.withLock { $0.cancelledStreams += 1 }
                throw error
            }
        }
    }

    /// A new generation of tokens, or the refusal.
    private func refresh() throws -> Session {
        let (generation, refused) = state.withLock { state in
            state.refreshCalls += 1
            return (state.refreshCalls, state.refusesRefreshes)
        }
        if refused { throw RPCError(code: .unauthenticated, reason: "INVALID_REFRESH_TOKEN", message: "Refused.") }
        return Session(accessToken: "access-\(generation)", refreshToken: "refresh-\(generation)", expiresIn: 900, user: user)
    }
}
