import Contracts
import Foundation
import RPC
import ServiceTestSupport
@testable import StorefrontKit
import Synchronization
import Testing

/// `basket.changes` over a scripted `WatchBasket` in this process (``FakeBasketWatchService``):
/// reconnecting with backoff, no version twice in a row, the token refreshed on the way, the
/// final failures, cancellation and a slow consumer.
@Suite("StorefrontKit basket changes")
struct BasketWatchTests {
    /// The delays a watch waited, and whether a wait was cut short by cancellation.
    final class Delays: Sendable {
        private let state = Mutex<(delays: [Duration], cancelled: Int)>(([], 0))
        /// Every delay asked for, in order.
        var all: [Duration] { state.withLock { $0.delays } }
        /// How many waits were cancelled.
        var cancelled: Int { state.withLock { $0.cancelled } }

        /// Notes `delay` and waits it out for real, unless `instant`.
        func sleep(_ delay: Duration, instant: Bool) async throws {
            state.withLock { $0.delays.append(delay) }
            do {
                try await Task.sleep(for: instant ? .milliseconds(1) : delay)
            } catch {
                state.withLock { $0.cancelled += 1 }
                throw error
            }
        }
    }

    /// A backoff of 10 ms doubling to 40 ms, without jitter, healthy after `healthyAfter`.
    static func backoff(healthyAfter: Duration = .seconds(3600), initial: Duration = .milliseconds(10)) -> ReconnectBackoff {
        ReconnectBackoff(initial: initial, cap: max(initial, .milliseconds(40)), healthyAfter: healthyAfter, jitter: { 1 })
    }

    /// The basket surface of `client`, waiting `backoff`'s delays through `delays` (instantly
    /// unless `realSleep`).
    static func basket(
        _ client: StorefrontClient, backoff: ReconnectBackoff = backoff(), delays: Delays, realSleep: Bool = false
    ) -> StorefrontBasket {
        StorefrontBasket(calls: client.calls, broadcast: client.auth.broadcast, backoff: backoff) { delay in
            try await delays.sleep(delay, instant: !realSleep)
        }
    }

    /// The versions of the first `count` baskets of `changes`.
    static func versions(_ changes: AsyncThrowingStream<Basket, any Error>, count: Int) async throws -> [Int] {
        var versions: [Int] = []
        for try await basket in changes {
            versions.append(basket.version)
            if versions.count == count { break }
        }
        return versions
    }

    @Test("Streams that fail, end OK or are cancelled by the server are watched again; a reconnect's first basket is skipped when its version was the last delivered")
    func reconnectsAndSkipsRepeats() async throws {
        let fake = FakeBasketWatchService([
            .init([1, 2], .fail(RPCError(code: .unavailable, message: "basket-svc is shutting down; watch again."))),
            .init([2, 3], .ok),
            .init([3], .fail(RPCError(code: .cancelled, message: "The gateway is stopping."))),
            .init([], .fail(RPCError(code: .resourceExhausted, reason: "TOO_MANY_WATCHES", message: "Too many."))),
            .init([3, 4], .open),
        ])
        let client = fake.client()
        let delays = Delays()
        let changes = Self.basket(client, delays: delays).changes
        #expect(try await Self.versions(changes, count: 4) == [1, 2, 3, 4])
        #expect(fake.attempts == 5)
        #expect(delays.all.count == 4)
        #expect(fake.tokens.allSatisfy { $0 == "Bearer access-0" })
        await client.close()
    }

    @Test("Closing the client ends basket.changes at once, even during a backoff, and lets the client go")
    func closeEndsChanges() async throws {
        let fake = FakeBasketWatchService([.init([1], .fail(RPCError(code: .unavailable, message: "Down.")))])
        let client = fake.client()
        let (firstSeen, seen) = AsyncStream.makeStream(of: Void.self)
        let watcher = Task { () -> [Int] in
            var versions: [Int] = []
            do {
                for try await basket in client.basket.changes {
                    versions.append(basket.version)
                    seen.yield()
                }
            } catch {}
            return versions
        }
        for await _ in firstSeen { break }  // the first stream delivered, then failed: a backoff follows
        let closed = ContinuousClock.now
        await client.close()
        #expect(await watcher.value == [1])
        #expect(ContinuousClock.now - closed < .seconds(2))
    }

    @Test("The backoff doubles per failed attempt up to its cap, and starts again only after a healthy stream", arguments: [true, false])
    func backoffGrowsAndResets(healthyQuickly: Bool) async throws {
        let failure = RPCError(code: .internal, message: "Broken.")
        let fake = FakeBasketWatchService([
            .init([], .fail(failure)), .init([], .fail(failure)), .init([], .fail(failure)),
            .init([1], .fail(failure)),  // delivered: healthy when healthy means "delivered"
            .init([], .fail(failure)),
            .init([2], .open),
        ])
        let client = fake.client()
        let delays = Delays()
        let backoff = Self.backoff(healthyAfter: healthyQuickly ? .zero : .seconds(3600))
        let changes = Self.basket(client, backoff: backoff, delays: delays).changes
        #expect(try await Self.versions(changes, count: 2) == [1, 2])
        let ms = { (n: Int64) in Duration.milliseconds(n) }
        #expect(delays.all == (healthyQuickly ? [ms(10), ms(20), ms(40), ms(10), ms(20)] : [ms(10), ms(20), ms(40), ms(40), ms(40)]))
        await client.close()
    }

    @Test("Each delay is the capped exponential backoff times a jitter of 50–100 %")
    func jitteredDelays() {
        let backoff = ReconnectBackoff.standard
        for failures in 1...12 {
            let full = Duration.exponentialBackoff(initial: backoff.initial, multiplier: 2, step: failures, cap: backoff.cap)
            let delay = backoff.delay(afterFailures: failures)
            #expect(delay >= full * 0.5 && delay <= full, "\(failures): \(delay)")
        }
        #expect(backoff.delay(afterFailures: 40) <= backoff.cap)
        let draws = Set((0..<20).map { _ in backoff.delay(afterFailures: 3) })
        #expect(draws.count > 1, "no jitter")
    }

    @Test("A token refused mid-stream is refreshed and the watch opened again at once with the new one; refused again after baskets, it is refreshed again")
    func refusedTokenRefreshed() async throws {
        let expired = RPCError(code: .unauthenticated, reason: "ACCESS_TOKEN_EXPIRED", message: "Expired.")
        let fake = FakeBasketWatchService([.init([1], .fail(expired)), .init([1, 2], .fail(expired)), .init([2, 3], .open)])
        let client = fake.client()
        let delays = Delays()
        let changes = Self.basket(client, delays: delays).changes
        #expect(try await Self.versions(changes, count: 3) == [1, 2, 3])
        #expect(fake.refreshCalls == 2)
        #expect(fake.tokens == ["Bearer access-0", "Bearer access-1", "Bearer access-2"])
        #expect(delays.all.isEmpty)  // a refresh is no outage
        #expect(client.auth.currentUser == fake.user)
        await client.close()
    }

    @Test("What retrying cannot fix ends the stream with the error: a token refused again after a refresh, a refused refresh (signing out), PERMISSION_DENIED")
    func finalFailures() async throws {
        let expired = RPCError(code: .unauthenticated, reason: "ACCESS_TOKEN_EXPIRED", message: "Expired.")
        let revoked = RPCError(code: .unauthenticated, reason: "SESSION_REVOKED", message: "Revoked.")
        let denied = RPCError(code: .permissionDenied, message: "Not yours.")
        let cases: [(script: [FakeBasketWatchService.Attempt], refuseRefresh: Bool, code: StorefrontError.Code, refreshes: Int, signedOut: Bool)] = [
            ([.init([], .fail(expired)), .init([], .fail(expired))], false, .unauthenticated, 1, false),
            ([.init([1], .fail(revoked))], true, .unauthenticated, 1, true),
            ([.init([1], .fail(denied))], false, .permissionDenied, 0, false),
        ]
        for each in cases {
            let fake = FakeBasketWatchService(each.script)
            if each.refuseRefresh { fake.refuseRefreshes() }
            let client = fake.client()
            let delays = Delays()
            let error = await #expect(throws: StorefrontError.self) {
                for try await _ in Self.basket(client, delays: delays).changes {}
            }
            #expect(error?.code == each.code, "\(String(describing: error))")
            #expect(fake.refreshCalls == each.refreshes)
            #expect(fake.attempts == each.script.count)
            #expect((client.auth.currentUser == nil) == each.signedOut)
            await client.close()
        }
    }

    @Test("Signed out: the stream ends UNAUTHENTICATED at once when no one is signed in, and when the user signs out while it is open (its server call cancelled)")
    func signedOut() async throws {
        let nobody = FakeBasketWatchService([])
        let anonymous = nobody.client(signedIn: false)
        let refused = await #expect(throws: StorefrontError.self) {
            for try await _ in Self.basket(anonymous, delays: Delays()).changes {}
        }
        #expect(refused == StorefrontError.notSignedIn)
        #expect(nobody.attempts == 0)
        await anonymous.close()

        let fake = FakeBasketWatchService([.init([1], .open)])
        let client = fake.client()
        var baskets = Self.basket(client, delays: Delays()).changes.makeAsyncIterator()
        #expect(try await baskets.next()?.version == 1)
        try await client.calls.sessions.signOut()  // here only (the fake serves no SignOut)
        let ended = await #expect(throws: StorefrontError.self) { _ = try await baskets.next() }
        #expect(ended?.code == .unauthenticated && ended?.reason == .missingToken)
        #expect(await eventually { fake.cancelledStreams == 1 })
        await client.close()
    }

    @Test("Cancelling the consuming task, or dropping the iterator, cancels the server call; cancelling during a backoff ends the wait")
    func cancellation() async throws {
        let fake = FakeBasketWatchService([.init([1], .open), .init([1], .open)])
        let client = fake.client()
        let basket = Self.basket(client, delays: Delays())
        let firstBasket = AsyncStream.makeStream(of: Int.self)
        let consumer = Task {
            for try await basket in basket.changes { firstBasket.continuation.yield(basket.version) }
        }
        var first = firstBasket.stream.makeAsyncIterator()
        #expect(await first.next() == 1)
        consumer.cancel()
        try await consumer.value  // a cancelled consumer's loop just ends
        #expect(await eventually { fake.cancelledStreams == 1 })

        do {
            var dropped = basket.changes.makeAsyncIterator()
            #expect(try await dropped.next()?.version == 1)
        }
        #expect(await eventually { fake.cancelledStreams == 2 })
        #expect(fake.attempts == 2)  // neither was watched again
        await client.close()

        let failing = FakeBasketWatchService([.init([1], .fail(RPCError(code: .unavailable, message: "Gone.")))])
        let waiting = failing.client()
        let delays = Delays()
        let patient = Self.basket(waiting, backoff: Self.backoff(initial: .seconds(3600)), delays: delays, realSleep: true)
        let sleeper = Task { for try await _ in patient.changes {} }
        #expect(await eventually { delays.all.count == 1 })
        sleeper.cancel()
        try await sleeper.value
        #expect(await eventually { delays.cancelled == 1 })
        #expect(failing.attempts == 1)
        await waiting.close()
    }

    @Test("A consumer slower than the changes gets the latest basket, not a backlog")
    func slowConsumerGetsLatest() async throws {
        let fake = FakeBasketWatchService([.init(Array(1...50), .open)])
        let client = fake.client()
        var baskets = Self.basket(client, delays: Delays()).changes.makeAsyncIterator()
        #expect(await eventually { fake.sent == 50 })
        try await Task.sleep(for: .milliseconds(100))  // the last basket reaches the stream's buffer
        let first = try #require(try await baskets.next()).version
        #expect(first > 1, "the consumer got the oldest basket first: a backlog was kept")
        var read = [first]
        while read.last != 50, let next = try await baskets.next() { read.append(next.version) }
        #expect(read.count < 5, "\(read)")
        await client.close()
    }
}
