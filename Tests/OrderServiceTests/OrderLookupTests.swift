import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// GetOrder and ListOrders (API.md §6): the caller's own orders only, newest first, paged.
@Suite("Reading orders")
struct OrderLookupTests {
    @Test("GetOrder returns the caller's order; an unknown id or another user's order is ORDER_NOT_FOUND")
    func getOrder() async throws {
        try await withOrderStack { stack in
            let owner = try await stack.newShopper()
            let stranger = try await stack.newShopper()
            try await stack.addItem(19, count: 2, for: owner)
            let placed = try await stack.placeOrder(as: owner)

            #expect(try await stack.order(placed.id, as: owner) == placed)
            await expectRPCError(OrderReason.orderNotFound) {
                try await stack.order(UUID().uuidString.lowercased(), as: owner)
            }
            await expectRPCError(OrderReason.orderNotFound) { try await stack.order(placed.id, as: stranger) }
            #expect(try await stack.listOrders(as: stranger).orders.isEmpty)
        }
    }

    @Test("ListOrders answers newest first, in pages linked by nextPageToken")
    func listOrdersNewestFirstAndPaged() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            var placed: [Order] = []
            for productID in [20, 21, 22] {
                try await stack.addItem(productID, for: shopper)
                placed.append(try await stack.placeOrder(as: shopper))
            }
            let newestFirst = placed.reversed().map(\.id)

            let everything = try await stack.listOrders(as: shopper)
            #expect(everything.orders.map(\.id) == newestFirst)
            #expect(everything.orders.map(\.items.first?.productId) == [22, 21, 20])
            #expect(everything.nextPageToken == "")

            let firstPage = try await stack.listOrders(pageSize: 2, as: shopper)
            #expect(firstPage.orders.map(\.id) == Array(newestFirst.prefix(2)))
            #expect(!firstPage.nextPageToken.isEmpty)
            let secondPage = try await stack.listOrders(pageSize: 2, pageToken: firstPage.nextPageToken, as: shopper)
            #expect(secondPage.orders.map(\.id) == [newestFirst[2]])
            #expect(secondPage.nextPageToken == "")
        }
    }

    @Test("a page token that was altered, or belongs to another user, is INVALID_PAGE_TOKEN")
    func alteredPageToken() async throws {
        try await withOrderStack { stack in
            let shopper = try await stack.newShopper()
            let stranger = try await stack.newShopper()
            for productID in [23, 24] {
                try await stack.addItem(productID, for: shopper)
                try await stack.placeOrder(as: shopper)
            }
            let token = try await stack.listOrders(pageSize: 1, as: shopper).nextPageToken
            #expect(!token.isEmpty)

            // A character in the middle: every bit of it counts, unlike the last one's padding bits.
            var characters = Array(token)
            let middle = characters.count / 2
            characters[middle] = characters[middle] == "A" ? "B" : "A"
            let altered = String(characters)
            await expectRPCError(OrderReason.invalidPageToken) {
                try await stack.listOrders(pageSize: 1, pageToken: altered, as: shopper)
            }
            await expectRPCError(OrderReason.invalidPageToken) {
                try await stack.listOrders(pageSize: 1, pageToken: token, as: stranger)
            }
        }
    }
}
