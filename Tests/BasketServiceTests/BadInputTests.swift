import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// Requests that are not what API.md describes are INVALID_ARGUMENT and change nothing.
@Suite("Bad input")
struct BadInputTests {
    /// Bodies of the wrong shape: wrong types, missing fields, not JSON objects.
    static let malformed: [(method: String, json: String)] = [
        ("AddItem", #"{"productId": "three"}"#),
        ("AddItem", #"{"productId": true}"#),
        ("AddItem", #"{"productId": 1, "count": "2"}"#),
        ("AddItem", #"{"count": 2}"#),
        ("AddItem", "[1]"),
        ("AddItem", "productId=1"),
        ("UpdateItemCount", #"{"itemId": 7, "count": 1}"#),
        ("UpdateItemCount", #"{"itemId": "8a1c5d3e-6f2b-4c7a-9d0e-1b2c3d4e5f60"}"#),
        ("UpdateItemCount", #"{"itemId": "8a1c5d3e-6f2b-4c7a-9d0e-1b2c3d4e5f60", "count": 1, "expectedVersion": "1"}"#),
        ("RemoveItem", "{}"),
        ("RemoveItem", #"{"itemId": null}"#),
        ("ClearBasket", #"{"expectedVersion": "x"}"#),
    ]

    /// Well-formed bodies with values no basket can take, the field each names, and the
    /// message in the shopper's words (no field path).
    static let invalid: [(method: String, json: String, field: String, message: String)] = [
        ("UpdateItemCount", #"{"itemId": "", "count": 1}"#, "itemId", "The item id must not be empty."),
        ("UpdateItemCount", #"{"itemId": "not-an-item", "count": 1}"#, "itemId",
         "The item id must be the id of a basket item (a UUID)."),
        ("UpdateItemCount", #"{"itemId": "8a1c5d3e-6f2b-4c7a-9d0e-1b2c3d4e5f60", "count": 1, "expectedVersion": -1}"#,
         "expectedVersion", "The expected version must not be negative."),
        ("RemoveItem", #"{"itemId": ""}"#, "itemId", "The item id must not be empty."),
        ("RemoveItem", #"{"itemId": "12345"}"#, "itemId", "The item id must be the id of a basket item (a UUID)."),
        ("ClearBasket", #"{"expectedVersion": -2}"#, "expectedVersion", "The expected version must not be negative."),
    ]

    @Test("wrong types, missing fields and non-objects are INVALID_ARGUMENT MALFORMED_MESSAGE")
    func malformedBodies() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            for (method, json) in Self.malformed {
                let error = await expectRPCError(.invalidArgument, reason: "MALFORMED_MESSAGE") {
                    try await ana.raw(method, json: json)
                }
                #expect(error != nil, "\(method) \(json)")
            }
            #expect(try await ana.basket().version == 0)
        }
    }

    @Test("an empty or malformed item id and a negative expectedVersion are INVALID_ARGUMENT naming the field, with a stable reason")
    func invalidValues() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            try await ana.add(1)
            for (method, json, field, message) in Self.invalid {
                let reason = field == "itemId" ? BasketReason.invalidItemID : .invalidVersion
                let error = await expectRPCError(reason) { try await ana.raw(method, json: json) }
                #expect(error?.violatedFields == [field], "\(method) \(json): \(String(describing: error))")
                #expect(error?.message == message, "\(method) \(json)")
            }
            #expect(try await ana.basket().version == 1)
        }
    }

    @Test("unknown fields are ignored: a body cannot name another user")
    func unknownFieldsIgnored() async throws {
        try await withBasketStack { stack in
            let ana = try await stack.shopper("ana")
            let ben = try await stack.shopper("ben")
            let json = #"{"productId": 3, "userId": "\#(ben.userID)", "unitPrice": {"amount": 1, "currency": "USD"}}"#
            let basket = try await ana.rawBasket("AddItem", json: json)
            #expect(basket.line(of: 3)?.unitPrice == (try await stack.product(3)).price)
            #expect(try await ben.basket().items.isEmpty)
        }
    }
}
