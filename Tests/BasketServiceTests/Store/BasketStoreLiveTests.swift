@testable import basket_svc
import Contracts
import Foundation
import PostgreSQL
import ServiceTestSupport
import Storage
import Testing

/// `BasketStore` on both backends (SQLite and PostgreSQL): what a change stores and answers,
/// what it refuses, and that of concurrent changes made with one `expectedVersion` exactly one
/// succeeds.
@Suite("Basket store, live")
struct BasketStoreLiveTests {
    @Test("lines come back as stored, oldest first; each change adds one to the version", arguments: storeBackends)
    func linesRoundTrip(backend: SQLDialect) async throws {
        try await withBasketStore(backend) { store in
            #expect(try await store.basket(userID: "ana") == .empty)
            let lines = [
                LineRecord.sample(7, count: 2, title: "Crème brûlée torch — “pro” 世界"),
                LineRecord.sample(3, count: 10, unitAmount: 2_000_000_000_000),
                LineRecord.sample(12),
            ]
            var answers: [BasketRecord] = []
            for (index, line) in lines.enumerated() {
                answers.append(try await store.add(line, userID: "ana", now: 1_000 + Int64(index)))
            }
            #expect(answers.map(\.version) == [1, 2, 3])
            #expect(answers.map(\.updatedAt) == [1_000, 1_001, 1_002])
            let stored = try await store.basket(userID: "ana")
            #expect(stored == answers.last)
            #expect(stored.lines == lines)
            #expect(try await store.basket(userID: "ben") == .empty)
        }
    }

    @Test("a refused change leaves the basket and its version as they were", arguments: storeBackends)
    func refusals(backend: SQLDialect) async throws {
        try await withBasketStore(backend) { store in
            let first = LineRecord.sample(1)
            let basket = try await store.add(first, userID: "ana")
            await #expect(throws: BasketError.alreadyInBasket(productID: 1, itemID: first.id)) {
                try await store.add(.sample(1), userID: "ana")
            }
            await #expect(throws: BasketError.currencyMismatch(basket: "USD", product: "EUR")) {
                try await store.add(.sample(2, currency: "EUR"), userID: "ana")
            }
            await #expect(throws: BasketError.versionConflict(expected: 0, current: 1)) {
                try await store.setCount(3, itemID: first.id, userID: "ana", expectedVersion: 0)
            }
            await #expect(throws: BasketError.itemNotFound) {
                try await store.setCount(3, itemID: UUID().uuidString.lowercased(), userID: "ana", expectedVersion: nil)
            }
            await #expect(throws: BasketError.itemNotFound) {
                try await store.setCount(3, itemID: first.id, userID: "ben", expectedVersion: nil)
            }
            await #expect(throws: BasketError.versionConflict(expected: 7, current: 1)) {
                try await store.clear(userID: "ana", expectedVersion: 7)
            }
            #expect(try await store.basket(userID: "ana") == basket)
        }
    }

    @Test("a full basket refuses another line", arguments: storeBackends)
    func fullBasket(backend: SQLDialect) async throws {
        try await withBasketStore(backend) { store in
            for productID in 1...BasketContract.maxLines { _ = try await store.add(.sample(productID), userID: "ana") }
            await #expect(throws: BasketError.basketFull) {
                try await store.add(.sample(BasketContract.maxLines + 1), userID: "ana")
            }
            let basket = try await store.basket(userID: "ana")
            #expect(basket.lines.count == BasketContract.maxLines && basket.version == BasketContract.maxLines)
        }
    }

    @Test("counts change and lines go; a change that changes nothing keeps the version; a clear never lowers it", arguments: storeBackends)
    func countsAndClear(backend: SQLDialect) async throws {
        try await withBasketStore(backend) { store in
            let kept = LineRecord.sample(1), removed = LineRecord.sample(2)
            _ = try await store.add(kept, userID: "ana")
            _ = try await store.add(removed, userID: "ana")
            let raised = try await store.setCount(4, itemID: kept.id, userID: "ana", expectedVersion: 2)
            #expect(raised.version == 3 && raised.lines.first?.count == 4)
            #expect(try await store.setCount(4, itemID: kept.id, userID: "ana", expectedVersion: 3) == raised)
            let shorter = try await store.setCount(0, itemID: removed.id, userID: "ana", expectedVersion: nil)
            #expect(shorter.version == 4 && shorter.lines.map(\.id) == [kept.id])
            let cleared = try await store.clear(userID: "ana", expectedVersion: 4)
            #expect(cleared.version == 5 && cleared.lines.isEmpty)
            #expect(try await store.clear(userID: "ana", expectedVersion: nil) == cleared)
            // The basket row outlives its lines: an expectedVersion of before the clear never matches again.
            let again = try await store.add(.sample(1), userID: "ana")
            #expect(again.version == 6)
        }
    }

    @Test("20 concurrent changes with the same expectedVersion: exactly one succeeds, the rest VERSION_CONFLICT", arguments: storeBackends)
    func oneWinner(backend: SQLDialect) async throws {
        try await withBasketStore(backend) { store in
            let line = LineRecord.sample(5)
            let basket = try await store.add(line, userID: "ana")
            let outcomes = await concurrentOutcomes(20) { index in
                // Counts 2...10, each a change of the line's 1.
                try await store.setCount(2 + index % 9, itemID: line.id, userID: "ana", expectedVersion: basket.version)
            }
            try Self.expectOneWinner(outcomes, from: basket, final: try await store.basket(userID: "ana"))
        }
    }

    @Test("two replicas (two Database objects on one PostgreSQL database): of 20 concurrent same-expectedVersion changes exactly one succeeds")
    func oneWinnerAcrossReplicas() async throws {
        try await withReplicaStores { first, second in
            let line = LineRecord.sample(5)
            let basket = try await first.add(line, userID: "ana")
            let outcomes = await concurrentOutcomes(20) { index in
                let replica = index.isMultiple(of: 2) ? first : second
                return try await replica.clear(userID: "ana", expectedVersion: basket.version)
            }
            try Self.expectOneWinner(outcomes, from: basket, final: try await second.basket(userID: "ana"))
        }
    }

    @Test("two replicas: concurrent changes without expectedVersion all apply, one version each")
    func everyChangeCountsAcrossReplicas() async throws {
        try await withReplicaStores { first, second in
            let outcomes = await concurrentOutcomes(16) { index in
                try await (index.isMultiple(of: 2) ? first : second).add(.sample(index + 1), userID: "ana")
            }
            let answers = try outcomes.map { try $0.get() }
            #expect(Set(answers.map(\.version)) == Set(1...16))
            let final = try await first.basket(userID: "ana")
            #expect(final.version == 16)
            #expect(Set(final.lines.map(\.productID)) == Set(1...16))
        }
    }

    @Test("on PostgreSQL a committed change notifies basket_changes with the user id; a refused or empty change does not")
    func changesNotify() async throws {
        try await PostgreSQLServer.withDatabase { url in try await withBasketStore(at: .postgresql(url: url, schema: "basket")) { store in
            let listener = try PostgreSQLConnection(url: url)
            try listener.listen(BasketStore.changeChannel)
            let line = LineRecord.sample(1)
            _ = try await store.add(line, userID: "ana")
            _ = try? await store.clear(userID: "ana", expectedVersion: 9)  // refused
            _ = try await store.setCount(1, itemID: line.id, userID: "ana", expectedVersion: nil)  // no change
            _ = try await store.clear(userID: "ben", expectedVersion: nil)  // nothing to clear
            _ = try await store.setCount(2, itemID: line.id, userID: "ana", expectedVersion: nil)
            var payloads: [String] = []
            let deadline = ContinuousClock.now + .seconds(5)
            while payloads.count < 2 && ContinuousClock.now < deadline {
                payloads += try listener.waitForNotifications(timeout: .milliseconds(100)).map(\.payload)
            }
            payloads += try listener.waitForNotifications(timeout: .milliseconds(200)).map(\.payload)
            #expect(payloads == ["ana", "ana"])
        } }
    }

    /// Expects exactly one success among `outcomes` (changes of `basket` with its version),
    /// every other a version conflict, and `final` to be the winner's answer, one version on.
    static func expectOneWinner(_ outcomes: [Result<BasketRecord, any Error>], from basket: BasketRecord, final: BasketRecord) throws {
        let winners = outcomes.compactMap { try? $0.get() }
        #expect(winners.count == 1)
        let conflicts = outcomes.filter { outcome in
            guard case .failure(let error) = outcome else { return false }
            return error as? BasketError == .versionConflict(expected: basket.version, current: basket.version + 1)
        }
        #expect(conflicts.count == outcomes.count - 1, "\(outcomes.filter { (try? $0.get()) == nil })")
        #expect(final.version == basket.version + 1)
        #expect(final == winners.first)
    }
}
