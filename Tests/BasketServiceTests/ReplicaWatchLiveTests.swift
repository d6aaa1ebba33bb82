@testable import basket_svc
import Contracts
import Foundation
import PostgreSQL
import ServiceTestSupport
import Storage
import Testing

/// `WatchBasket` across replicas: two basket-svc cores on one PostgreSQL database, a change
/// made through one reaching the watchers of the other (`LISTEN/NOTIFY`), also after the
/// listening connection was lost.
@Suite("WatchBasket across replicas, live")
struct ReplicaWatchLiveTests {
    @Test("every change made through one replica reaches the user's watchers on both; another user's watcher sees nothing")
    func changesReachEveryReplica() async throws {
        try await withBasketReplicas { stack, replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            let onA = try await stack.newShopper("ana", on: a)
            let onB = try await stack.shopper(onA.email, on: b)
            let ben = try await stack.newShopper("ben", on: b)
            let watches = [BasketWatch.start(onA), BasketWatch.start(onB)]
            let bens = BasketWatch.start(ben)
            for watch in watches + [bens] { #expect(await watch.first()?.version == 0) }

            let changes: [@Sendable () async throws -> Basket] = [
                { try await onA.add(1) },
                { try await onA.add(2, count: 3) },
                { try await onA.setCount(try await onA.basket().items[0].id, to: 5) },
                { try await onB.remove(try await onB.basket().items[1].id) },  // through B, seen on A
                { try await onA.clear() },
            ]
            var answers: [Basket] = []
            for change in changes {
                let answer = try await change()
                answers.append(answer)
                for watch in watches { #expect(await watch.waitFor(version: answer.version) == answer) }
            }
            for watch in watches {
                #expect(watch.baskets.map(\.version) == [0, 1, 2, 3, 4, 5])
                #expect(Array(watch.baskets.dropFirst()) == answers)
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(bens.baskets.map(\.version) == [0], "ben's watcher saw another user's basket")
            for watch in watches + [bens] { await watch.cancel() }
        }
    }

    @Test("a replica whose listening connection drops reads every watched basket again, then follows changes again")
    func reconnectionCatchesUp() async throws {
        try await withBasketReplicas { stack, replicas, url in
            let (a, b) = (replicas[0], replicas[1])
            let onA = try await stack.newShopper("ana", on: a)
            let watch = BasketWatch.start(try await stack.shopper(onA.email, on: b))
            #expect(await watch.first()?.version == 0)
            let feed = try #require(b.core.changeFeed)
            let listener = try #require(await Self.listenerProcessID(of: feed))

            // A change nothing announces, as one committed while no connection listened: only
            // the reading again after a reconnection brings it.
            try await a.core.store.database.write { connection in
                try connection.execute(
                    "INSERT INTO baskets (user_id, version, updated_at) VALUES (?, 1, 0)", [onA.userID])
            }
            #expect(await watch.waitFor(version: 1, within: .milliseconds(300)) == nil)
            try PostgreSQLConnection(url: url).execute("SELECT pg_terminate_backend($1)", [String(listener)])
            #expect(await watch.waitFor(version: 1, within: .seconds(10))?.version == 1)

            let relistening = try #require(await Self.listenerProcessID(of: feed, other: listener))
            #expect(relistening != listener)
            let changed = try await onA.add(3)
            #expect(await watch.waitFor(version: changed.version) == changed)
            await watch.cancel()
        }
    }

    @Test("on SQLite basket-svc follows no other replica: it has no change feed")
    func noFeedOnSQLite() async throws {
        let store = try await BasketStore.open(location: .sqlite(path: ":memory:"))
        #expect(BasketServer.changeFeed(location: store.database.location, store: store, hub: BasketHub()) == nil)
        #expect(BasketServer.changeFeed(location: .postgresql(url: "postgres://x@127.0.0.1:1/y", schema: "basket"), store: store, hub: BasketHub()) != nil)
        await store.database.close()
    }

    /// The server process id of `feed`'s listening connection once it listens (one other than
    /// `other`), waiting up to ten seconds; nil if it never does.
    static func listenerProcessID(of feed: BasketChangeFeed, other: Int32? = nil) async -> Int32? {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let id = feed.listenerProcessID, id != other { return id }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}
