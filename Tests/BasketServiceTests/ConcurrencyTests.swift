import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// Optimistic concurrency under real concurrency: many changes based on one version.
@Suite("Concurrent changes")
struct ConcurrencyTests {
    @Test("concurrent UpdateItemCount with the same expectedVersion: exactly one wins, the rest VERSION_CONFLICT")
    func oneWinner() async throws {
        try await withBasketStack { stack in
            let phone = try await stack.shopper("ana")
            let laptop = try await stack.anotherSession(of: phone)
            let basket = try await phone.add(3)
            let item = try #require(basket.line(of: 3))
            let contenders = 12
            let outcomes = await withTaskGroup(of: Result<Basket, any Error>.self) { group in
                for index in 0..<contenders {
                    let session = index.isMultiple(of: 2) ? phone : laptop
                    group.addTask {
                        do {
                            return .success(
                                try await session.setCount(item.id, to: 2 + index % 9, expectedVersion: basket.version))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let winners = outcomes.compactMap { try? $0.get() }
            #expect(winners.count == 1)
            let conflicts = outcomes.filter { outcome in
                guard case .failure(let error as RPCError) = outcome else { return false }
                return BasketReason.versionConflict.matches(error) && error.code == .aborted
            }
            #expect(conflicts.count == contenders - 1)
            let final = try await phone.basket()
            #expect(final.version == basket.version + 1)
            #expect(final == winners.first)
        }
    }

    @Test("concurrent changes without expectedVersion all apply, one version each")
    func everyChangeCounts() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for productId in 1...16 {
                    group.addTask { try await ana.add(productId) }
                }
                try await group.waitForAll()
            }
            let basket = try await ana.basket()
            #expect(basket.items.count == 16)
            #expect(basket.version == 16)
            #expect(Set(basket.items.map(\.productId)) == Set(1...16))
        }
    }
}
