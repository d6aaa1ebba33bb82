import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 30's multi-replica test, through the processes `deploy/compose up --postgres` starts:
/// two replicas of every service on one PostgreSQL behind the gateway, shoppers buying one
/// product flat out while replica @1 of each service is killed in turn, then nothing
/// acknowledged lost, one order per idempotency key, stock that adds up, and `WatchBasket`
/// streams on both basket-svc replicas that saw every shopper's final basket.
@Suite("A shop on two replicas of every service, one of each killed under load", .serialized)
struct ReplicatedShopLiveTests {
    /// The gateway's per-client rate limit off (the shoppers share one address and buy flat
    /// out), and cheap password hashes for the sign-ups (auth-svc's `SHOP_SCRYPT_LOG_N`).
    static let environment = ["SHOP_GATEWAY_RATE_LIMIT": "0", "SHOP_SCRYPT_LOG_N": "12"]
    /// The product's stock before the load: more than the load can buy, so no order is short.
    static let initialStock = 100_000
    /// How many shoppers buy at once.
    static let shopperCount = 4

    @Test("a journey under SIGKILL of one replica of each service: no acknowledged order lost, one per key, stock adds up, watchers on both basket-svc replicas current")
    func journeyUnderReplicaKills() async throws {
        try await withComposeSystem(
            environment: Self.environment, portBase: ComposeReplicasLiveTests.portBase(), slots: 10
        ) { system in
            let up = try await system.run("up", "--postgres", timeout: .seconds(300))
            try #require(up.status == 0, "up --postgres failed: \(up)")
            let shop = try ComposeShop(system: system)
            defer { Task { await shop.close() } }
            let product = try await shop.createProduct(title: "stock shared by every replica", stock: Self.initialStock)
            let shoppers = try await Self.signUpShoppers(through: shop, system: system)
            let basketClients = try await Self.replicaClients(of: "basket-svc", in: system)
            defer { Task { for (_, client) in basketClients { await client.close() } } }
            let watchers = shoppers.flatMap { shopper in
                basketClients.map { BasketVersionWatcher.start(shopper, on: $0.replica, client: $0.client) }
            }
            do {
                try await Self.buyWhileKilling(product, shop: shop, shoppers: shoppers, watchers: watchers, system: system)
            } catch {
                for watcher in watchers { await watcher.stop() }
                throw error
            }
            for watcher in watchers { await watcher.stop() }
        }
    }

    /// The load of every shopper while replica @1 of each service is killed, a few seconds more,
    /// then the checks. The load is stopped before the checks, or when the kills fail.
    static func buyWhileKilling(
        _ product: Product, shop: ComposeShop, shoppers: [Shopper], watchers: [BasketVersionWatcher], system: ComposeSystem
    ) async throws {
        let loads = shoppers.map { ShopperOrderLoad(shopper: $0, productID: product.id) }
        let running = loads.map { load in Task { await load.run() } }
        let stopLoads = {
            for load in loads { load.stop() }
            for task in running { await task.value }
        }
        let killed: [(replica: String, pid: Int)]
        do {
            killed = try await killFirstReplicas(of: system)
            try await Task.sleep(for: .seconds(4))
        } catch {
            await stopLoads()
            throw error
        }
        await stopLoads()
        let summary = summary(loads, watchers, killed: killed)

        try await expectSupervisorsRestarted(killed, in: system, summary: summary)
        expectEveryKeyAnswered(loads, summary: summary)
        try await expectOrdersAsAcknowledged(loads, summary: summary)
        try await expectStockAddsUp(product, shop: shop, loads: loads, summary: summary)
        try await expectWatchersCurrent(watchers, shoppers: shoppers, productID: product.id, summary: summary)
    }

    // MARK: The system

    /// `shopperCount` accounts signed up, verified (the link auth-svc's replicas mail into their
    /// shared data directory) and signed in through the gateway.
    static func signUpShoppers(through shop: ComposeShop, system: ComposeSystem) async throws -> [Shopper] {
        let accounts = TestAccounts(
            client: shop.client, authDataDirectory: system.data.appendingPathComponent("auth-svc"),
            password: ServiceStack.shopperPassword)
        var shoppers: [Shopper] = []
        for index in 1...shopperCount {
            let email = "replica-shopper-\(index)-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            shoppers.append(Shopper(email: email, session: try await accounts.signedInUser(email), client: shop.client))
        }
        return shoppers
    }

    /// A client of each replica of `service` of its own, at the address `status` gives it.
    static func replicaClients(of service: String, in system: ComposeSystem) async throws -> [(replica: String, client: RPCClient)] {
        let rows = try await system.status().filter { $0.name.hasPrefix("\(service)@") }
        try #require(rows.count == 2, "expected two replicas of \(service): \(rows)")
        return try rows.map { row in
            let port = try #require(row.address.split(separator: ":").last.flatMap { Int($0) }, "\(row)")
            return (row.name, try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port)))
        }
    }

    /// SIGKILLs replica @1 of every replicated service in turn, a second apart, while the load
    /// runs; returns each killed replica's name and pid.
    static func killFirstReplicas(of system: ComposeSystem) async throws -> [(replica: String, pid: Int)] {
        var killed: [(replica: String, pid: Int)] = []
        for service in system.services where service != "gateway" {
            try await Task.sleep(for: .seconds(1))
            let replica = "\(service)@1"
            let pid = try #require(try system.row(replica, in: try await system.status()).pid, "\(replica) does not run")
            kill(Int32(pid), SIGKILL)
            killed.append((replica, pid))
        }
        return killed
    }

    // MARK: Checks

    /// The supervisors started every killed replica again (a new process), and all serve.
    static func expectSupervisorsRestarted(
        _ killed: [(replica: String, pid: Int)], in system: ComposeSystem, summary: String
    ) async throws {
        let serving = await eventually(within: .seconds(30), every: .milliseconds(500)) {
            ((try? await system.status()) ?? []).allSatisfy { $0.status == "serving" }
        }
        let rows = try await system.status()
        #expect(serving, "not every replica serves again: \(rows)\n\(summary)")
        for (replica, pid) in killed {
            let row = try system.row(replica, in: rows)
            #expect(row.pid != nil && row.pid != pid && row.restarts >= 1, "\(replica) was not restarted: \(row)")
        }
    }

    /// Every PlaceOrder retried with its key was answered for good (an order) within
    /// ``ShopperOrderLoad/settleLimit`` of the load's end: a key whose first call died with its
    /// order-svc replica must not stay `REQUEST_IN_PROGRESS` past what a client retries for.
    static func expectEveryKeyAnswered(_ loads: [ShopperOrderLoad], summary: String) {
        let unresolved = loads.flatMap { $0.outcome.unresolved.keys }
        let refused = loads.flatMap { $0.outcome.refused.keys }
        #expect(unresolved.isEmpty, "keys never answered, still held by a call of a killed replica: \(unresolved)\n\(summary)")
        #expect(refused.isEmpty, "keys answered with an error, not an order: \(refused)\n\(summary)")
    }

    /// Every acknowledged order exists, paid, each key's its own — none lost, none made twice —
    /// and beyond them a shopper has at most one order per key never answered (whose first
    /// call may or may not have made one): exactly the acknowledged ones when every key was.
    static func expectOrdersAsAcknowledged(_ loads: [ShopperOrderLoad], summary: String) async throws {
        let acknowledged = loads.map { $0.outcome.acknowledged.count }.reduce(0, +)
        #expect(acknowledged >= 20, "the load placed too few orders: \(summary)")
        for load in loads {
            let outcome = load.outcome
            let listed = Set(try await allOrders(of: load.shopper).map(\.id))
            let answered = Set(outcome.acknowledged.values)
            #expect(answered.count == outcome.acknowledged.count, "two keys answered with one order: \(outcome.acknowledged)")
            let missing = answered.subtracting(listed)
            let unanswered = listed.subtracting(answered)
            #expect(missing.isEmpty, "\(load.shopper.email): acknowledged orders missing: \(missing)\n\(summary)")
            #expect(
                unanswered.count <= outcome.unresolved.count,
                "\(load.shopper.email) has \(listed.count) orders for \(outcome.keys.count) keys; no key was answered with \(unanswered)\n\(summary)")
            for (key, id) in outcome.acknowledged {
                let order = try await load.shopper.client.unary(
                    OrderContract.getOrder, GetOrderRequest(id: id), options: load.shopper.options())
                #expect(order.status == .paid, "order \(id) of key \(key) is \(order.status)")
            }
        }
    }

    /// The stock left plus every unit a paid order keeps (a failed, cancelled or undone order
    /// released its reservation) is the stock the product started with — short by at most one
    /// unit per key never answered, whose order may still hold its reservation (each order is
    /// the basket's one line of one unit).
    static func expectStockAddsUp(_ product: Product, shop: ComposeShop, loads: [ShopperOrderLoad], summary: String) async throws {
        var paid = 0
        for load in loads {
            for order in try await allOrders(of: load.shopper) where order.status == .paid {
                paid += order.items.filter { $0.productId == product.id }.map(\.count).reduce(0, +)
            }
        }
        let inDoubt = loads.map { $0.outcome.unresolved.count }.reduce(0, +)
        let left = try #require(try await shop.product(product.id)).stock
        #expect(
            (initialStock - inDoubt)...initialStock ~= left + paid,
            "stock \(left) + \(paid) units paid for ≠ \(initialStock) (\(inDoubt) keys in doubt)\n\(summary)")
    }

    /// With the load over and every replica back, one more change to each basket (through the
    /// gateway, so made on either replica) reaches the streams open on both replicas without
    /// their reopening — LISTEN/NOTIFY carried it — and no stream ever went back a version.
    static func expectWatchersCurrent(
        _ watchers: [BasketVersionWatcher], shoppers: [Shopper], productID: Int, summary: String
    ) async throws {
        let allLive = await eventually(within: .seconds(20), every: .milliseconds(100)) { watchers.allSatisfy { $0.record.live } }
        #expect(allLive, "watchers not streaming again: \(watchers.map { "\($0.replica): \($0.record)" })")
        let streamsBefore = watchers.map { $0.record.streams }
        var finalVersion: [String: Int] = [:]
        for shopper in shoppers {
            finalVersion[shopper.userID] = try await changeBasket(of: shopper, productID: productID)
        }
        for (watcher, streams) in zip(watchers, streamsBefore) {
            let final = try #require(finalVersion[watcher.shopper.userID])
            let saw = await eventually(within: .seconds(10), every: .milliseconds(50)) { watcher.record.versions.last == final }
            let record = watcher.record
            #expect(saw, "\(watcher.replica) never delivered \(watcher.shopper.email)'s final version \(final): \(record)\n\(summary)")
            #expect(record.streams == streams, "\(watcher.replica) got the final version only by reopening: \(record)")
            #expect(!record.wentBackwards, "\(watcher.replica) went back a version: \(record.versions)")
        }
    }

    /// Changes `shopper`'s basket through the gateway — clears it, or adds `productID` to it
    /// when empty (clearing an empty basket changes nothing) — and returns the new version.
    static func changeBasket(of shopper: Shopper, productID: Int) async throws -> Int {
        let basket = try await shopper.client.unary(BasketContract.getBasket, Empty(), options: shopper.options())
        let changed =
            basket.items.isEmpty
            ? try await shopper.client.unary(BasketContract.addItem, AddItemRequest(productId: productID), options: shopper.options())
            : try await shopper.client.unary(BasketContract.clearBasket, ClearBasketRequest(), options: shopper.options())
        #expect(changed.version > basket.version, "the change made no new version: \(basket) → \(changed)")
        return changed.version
    }

    /// Every order of `shopper`, page after page.
    static func allOrders(of shopper: Shopper) async throws -> [Order] {
        var orders: [Order] = []
        var token: String?
        repeat {
            let page = try await shopper.client.unary(
                OrderContract.listOrders, ListOrdersRequest(pageSize: 100, pageToken: token), options: shopper.options())
            orders += page.orders
            token = page.nextPageToken.isEmpty ? nil : page.nextPageToken
        } while token != nil
        return orders
    }

    /// What the load and the watchers did, and which replicas were killed, for failure messages.
    static func summary(
        _ loads: [ShopperOrderLoad], _ watchers: [BasketVersionWatcher], killed: [(replica: String, pid: Int)]
    ) -> String {
        let lines = loads.map { "load of \($0.shopper.email): \($0.outcome)" }
            + watchers.map { "watcher of \($0.shopper.email) on \($0.replica): \($0.record)" }
        return "killed \(killed.map { "\($0.replica) (pid \($0.pid))" })\n" + lines.joined(separator: "\n")
    }
}
