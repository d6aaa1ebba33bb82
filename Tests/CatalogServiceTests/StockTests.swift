import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `ReserveStock` and `ReleaseStock` (API.md §4, README "Choices"): all lines or none,
/// `OUT_OF_STOCK` naming the short products in details, idempotent per reservation id, and a
/// release that gives the stock back exactly once.
@Suite("Stock reservations")
struct StockTests {
    /// Creates products with the given stock levels; returns their ids in order.
    static func stocked(_ stack: CatalogStack, _ levels: [Int]) async throws -> [Int] {
        var ids: [Int] = []
        for (index, stock) in levels.enumerated() {
            ids.append(try await stack.upsert(SampleProducts.make("Stocked item \(index)", stock: stock)).id)
        }
        return ids
    }

    /// The stock of each of `ids`.
    static func levels(_ stack: CatalogStack, _ ids: [Int]) async throws -> [Int] {
        var levels: [Int] = []
        for id in ids { levels.append(try await stack.product(id).stock) }
        return levels
    }

    @Test("a reservation takes its units from stock, up to the last unit")
    func reserve() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [10, 3])
            try await stack.reserve("order-1", [(ids[0], 4), (ids[1], 3)])
            #expect(try await Self.levels(stack, ids) == [6, 0])
            let listed = try await stack.allProducts().filter { ids.contains($0.id) }.map(\.stock)
            #expect(listed == [6, 0])
        }
    }

    @Test("a reservation one line cannot fill is OUT_OF_STOCK naming that product, and reserves nothing")
    func allOrNothing() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [10, 2, 5])
            let error = await expectRPCError(CatalogReason.outOfStock) {
                try await stack.reserve("order-1", [(ids[0], 4), (ids[1], 3), (ids[2], 5)])
            }
            #expect(error?.outOfStockProductIDs == [ids[1]])
            #expect(try await Self.levels(stack, ids) == [10, 2, 5])
        }
    }

    @Test("OUT_OF_STOCK names every short product, and the same product twice adds up")
    func everyShortProduct() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [1, 5, 0])
            let error = await expectRPCError(CatalogReason.outOfStock) {
                try await stack.reserve("order-1", [(ids[0], 2), (ids[1], 3), (ids[1], 3), (ids[2], 1)])
            }
            #expect(Set(error?.outOfStockProductIDs ?? []) == Set(ids))
            #expect(try await Self.levels(stack, ids) == [1, 5, 0])
            // Two lines of one product within its stock are fine.
            try await stack.reserve("order-2", [(ids[1], 2), (ids[1], 3)])
            #expect(try await Self.levels(stack, ids) == [1, 0, 0])
        }
    }

    @Test("repeating a reservation id answers {} without reserving again, whatever the lines")
    func idempotentReservation() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [10])
            try await stack.reserve("order-1", [(ids[0], 4)])
            try await stack.reserve("order-1", [(ids[0], 4)])
            try await stack.reserve("order-1", [(ids[0], 9)])
            #expect(try await Self.levels(stack, ids) == [6])
        }
    }

    @Test("ReleaseStock gives a reservation's units back once; unknown ids answer {}")
    func release() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [10, 4])
            try await stack.reserve("order-1", [(ids[0], 4), (ids[1], 4)])
            try await stack.reserve("order-2", [(ids[0], 1)])
            try await stack.release("order-1")
            #expect(try await Self.levels(stack, ids) == [9, 4])
            try await stack.release("order-1")
            try await stack.release("never-reserved")
            #expect(try await Self.levels(stack, ids) == [9, 4])
        }
    }

    @Test("a failed reservation holds nothing to release")
    func releaseFailedReservation() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [2])
            await expectRPCError(CatalogReason.outOfStock) { try await stack.reserve("order-1", [(ids[0], 3)]) }
            try await stack.release("order-1")
            #expect(try await Self.levels(stack, ids) == [2])
        }
    }

    @Test("releasing a reservation of a since-deleted product changes no other product's stock")
    func releaseAfterDelete() async throws {
        try await withCatalogService { stack in
            let doomed = try await Self.stocked(stack, [5])[0]
            try await stack.reserve("order-1", [(doomed, 3)])
            try await stack.delete(doomed)
            let newcomer = try await stack.upsert(SampleProducts.make("Newcomer", stock: 10))
            try await stack.release("order-1")
            #expect(try await stack.product(newcomer.id).stock == 10, "newcomer id \(newcomer.id), deleted id \(doomed)")
        }
    }

    @Test("a reservation naming an unknown product is PRODUCT_NOT_FOUND and reserves nothing")
    func unknownProduct() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [5])
            await expectRPCError(CatalogReason.productNotFound) {
                try await stack.reserve("order-1", [(ids[0], 1), (999_999, 1)])
            }
            #expect(try await Self.levels(stack, ids) == [5])
        }
    }

    @Test("concurrent reservations never sell more than the stock")
    func concurrentReservations() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [10])
            let outcomes = await withTaskGroup(of: RPCError?.self) { group in
                for order in 0..<25 {
                    group.addTask {
                        do {
                            try await stack.reserve("order-\(order)", [(ids[0], 1)])
                            return nil
                        } catch let error as RPCError {
                            return error
                        } catch {
                            return RPCError(code: .unknown, message: "\(error)")
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == nil }.count == 10)
            #expect(outcomes.compactMap { $0 }.allSatisfy { $0.reason == CatalogReason.outOfStock.rawValue })
            #expect(try await Self.levels(stack, ids) == [0])
        }
    }

    @Test("the same reservation sent many times at once reserves once")
    func concurrentRepeats() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [50])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await stack.reserve("order-1", [(ids[0], 3)]) }
                }
                try await group.waitForAll()
            }
            #expect(try await Self.levels(stack, ids) == [47])
        }
    }

    @Test("counts of Int.max are INVALID_ARGUMENT, never an overflow, and the service keeps serving")
    func hugeCounts() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [5])
            let error = await expectRPCError(.invalidArgument, reason: nil) {
                try await stack.reserve("order-1", [(ids[0], Int.max), (ids[0], Int.max)])
            }
            #expect(error?.namesField("count") == true, "\(error?.violatedFields ?? [])")
            #expect(await stack.isServing())
            #expect(try await Self.levels(stack, ids) == [5])
        }
    }

    @Test("two lines of the largest count add up without overflow to OUT_OF_STOCK")
    func largestCounts() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [1_500_000])
            let error = await expectRPCError(CatalogReason.outOfStock) {
                try await stack.reserve("order-1", [(ids[0], 1_000_000), (ids[0], 1_000_000)])
            }
            #expect(error?.outOfStockProductIDs == ids)
            try await stack.reserve("order-2", [(ids[0], 1_000_000)])
            #expect(try await Self.levels(stack, ids) == [500_000])
        }
    }

    @Test("units released into a stock at its limit are given back, and the product stays readable")
    func releaseIntoFullStock() async throws {
        try await withCatalogService { stack in
            var product = try await stack.upsert(SampleProducts.make("Bottomless well", stock: 1_000_000_000))
            try await stack.reserve("order-1", [(product.id, 2)])
            product.stock = 1_000_000_000
            try await stack.upsert(product)
            try await stack.release("order-1")
            #expect(try await stack.product(product.id).stock == 1_000_000_002)
            #expect(try await stack.allProducts().contains { $0.id == product.id })
        }
    }

    /// Reservation requests the README's rules refuse, as JSON.
    static let invalidReservations = [
        #"{"reservationId":"","items":[{"productId":1,"count":1}]}"#,
        #"{"reservationId":"\#(String(repeating: "r", count: 256))","items":[{"productId":1,"count":1}]}"#,
        #"{"reservationId":"order-1","items":[]}"#,
        #"{"reservationId":"order-1","items":[{"productId":1,"count":0}]}"#,
        #"{"reservationId":"order-1","items":[{"productId":1,"count":-2}]}"#,
        #"{"reservationId":"order-1","items":[{"productId":1,"count":1000001}]}"#,
    ]

    @Test("a reservation breaking the README's rules is INVALID_ARGUMENT and reserves nothing", arguments: invalidReservations)
    func invalidReservation(json: String) async throws {
        try await withCatalogService { stack in
            let before = try await stack.allProducts()
            let productId = try #require(before.first?.id)
            let message = json.replacingOccurrences(of: #""productId":1"#, with: #""productId":\#(productId)"#)
            await expectRPCError(.invalidArgument, reason: nil) {
                try await stack.rawCall(CatalogContract.reserveStock.path, [message], metadata: stack.asInternal.metadata)
            }
            #expect(try await stack.allProducts() == before)
        }
    }

    @Test("a reservation id of 255 characters is accepted")
    func longestReservationID() async throws {
        try await withCatalogService { stack in
            let ids = try await Self.stocked(stack, [3])
            try await stack.reserve(String(repeating: "r", count: 255), [(ids[0], 1)])
            #expect(try await Self.levels(stack, ids) == [2])
        }
    }
}
