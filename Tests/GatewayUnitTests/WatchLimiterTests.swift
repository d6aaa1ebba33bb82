import Contracts
@testable import gateway
import Logging
import RPC
import ServiceKit
import ServiceTestSupport
import Testing

/// The cap on the watches one user holds open (``WatchLimiter``).
@Suite("Gateway watch cap")
struct WatchLimiterTests {
    /// A context of `method` for `user` (anonymous when nil) calling from `peer`.
    func context(_ method: MethodInfo, user: String?, peer: String = "10.0.0.7:4321") -> ServerContext {
        var context = ServerContext(
            method: method, metadata: [:], deadline: nil, requestID: "r", peer: peer, logger: Logger(label: "t"))
        if let user {
            context.attributes[AuthenticatedUserKey.self] = AuthenticatedUser(
                id: user, sessionID: "s-\(peer)", email: "\(user)@example.com", emailVerified: true)
        }
        return context
    }

    /// Holds a place for `context` until `release` is resumed; returns once the place is taken.
    func hold(_ limiter: WatchLimiter, _ context: ServerContext) async throws -> (Task<Void, any Error>, AsyncStream<Void>.Continuation) {
        let (released, release) = AsyncStream<Void>.makeStream()
        let (taken, took) = AsyncStream<Void>.makeStream()
        let task = Task {
            try await limiter.holding(for: context) {
                took.yield()
                for await _ in released {}
            }
        }
        var iterator = taken.makeAsyncIterator()
        _ = await iterator.next()
        return (task, release)
    }

    @Test("a user gets the cap of each method, from any session or address; others and other methods are apart")
    func capPerUserAndMethod() async throws {
        let limiter = WatchLimiter(perUser: 2)
        let watch = BasketContract.watchBasket.info
        let first = try await hold(limiter, context(watch, user: "u1", peer: "10.0.0.1:1"))
        let second = try await hold(limiter, context(watch, user: "u1", peer: "10.0.0.2:9"))
        await expectRPCError(.resourceExhausted, reason: "TOO_MANY_WATCHES") {
            try await limiter.holding(for: context(watch, user: "u1", peer: "10.0.0.3:5")) {}
        }
        try await limiter.holding(for: context(watch, user: "u2")) {}
        try await limiter.holding(for: context(AuthContract.watchAuthState.info, user: "u1")) {}
        #expect(limiter.openCount == 2)
        for (task, release) in [first, second] {
            release.finish()
            try await task.value
        }
        #expect(limiter.openCount == 0 && limiter.holderCount == 0)
        try await limiter.holding(for: context(watch, user: "u1")) {}
    }

    @Test("a watch that fails or is cancelled gives its place back")
    func placeBackOnFailure() async throws {
        let limiter = WatchLimiter(perUser: 1)
        let watch = BasketContract.watchBasket.info
        await expectRPCError(.unavailable) {
            try await limiter.holding(for: context(watch, user: "u1")) {
                throw RPCError(code: .unavailable, message: "upstream gone")
            }
        }
        #expect(limiter.openCount == 0)
        let (task, _) = try await hold(limiter, context(watch, user: "u1"))
        #expect(limiter.openCount == 1)
        task.cancel()  // the stream's handler is cancelled (the client went away)
        _ = await task.result
        #expect(limiter.openCount == 0 && limiter.holderCount == 0)
    }

    @Test("anonymous streams are counted by address, whatever the port")
    func anonymousByAddress() async throws {
        let limiter = WatchLimiter(perUser: 1)
        let method = HealthContract.watch.info
        let (task, release) = try await hold(limiter, context(method, user: nil, peer: "10.0.0.7:1"))
        await expectRPCError(.resourceExhausted, reason: "TOO_MANY_WATCHES") {
            try await limiter.holding(for: context(method, user: nil, peer: "10.0.0.7:2")) {}
        }
        try await limiter.holding(for: context(method, user: nil, peer: "10.0.0.8:2")) {}
        release.finish()
        try await task.value
    }
}
