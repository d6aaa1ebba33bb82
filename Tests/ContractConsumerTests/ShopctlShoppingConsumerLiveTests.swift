import ContractTesting
import Contracts
@testable import shopctl
import Testing

/// `shopctl favorites …`, `basket …` and `order …`, signed in, against the gateway played
/// from shopctl's contract — `basket watch` until it is interrupted as Ctrl-C would.
@Suite("shopctl's shopping commands as a consumer")
struct ShopctlShoppingConsumerLiveTests {
    /// shopctl's interactions with the gateway.
    typealias Interactions = ShopctlInteractions

    /// The command line of `order place` for ``ShopctlInteractions/orderRequest``.
    static var placeOrder: [String] {
        let address = Interactions.orderRequest.shippingAddress
        return [
            "order", "place", "--name", address.name, "--line1", address.line1, "--city", address.city, "--postal-code",
            address.postalCode, "--country", address.country, "--card", "4242 4242 4242 4242", "--exp", "12/30", "--cvc", "123",
        ]
    }

    @Test("each signed-in command makes the call its interaction describes", arguments: [
        (["favorites", "add", "7"], "AddFavorite for favorites add"),
        (["favorites", "remove", "7"], "RemoveFavorite for favorites remove"),
        (["favorites", "list"], "ListFavorites for favorites list"),
        (["basket", "show"], "GetBasket for basket show"),
        (["basket", "add", "7", "--count", "2"], "AddItem for basket add"),
        (["basket", "set", Interactions.backpackLine.id, "3"], "UpdateItemCount for basket set"),
        (["basket", "remove", Interactions.lampLine.id], "RemoveItem for basket remove"),
        (["basket", "clear"], "ClearBasket for basket clear"),
        (placeOrder, "PlaceOrder for order place"),
        (["order", "list"], "ListOrders for order list"),
        (["order", "show", Interactions.paidOrder.id], "GetOrder for order show"),
        (["order", "cancel", Interactions.paidOrder.id], "CancelOrder for order cancel"),
    ])
    func signedInCommand(arguments: [String], interaction: String) async throws {
        let credentials = try ShopctlConsumerLiveTests.credentials()
        try await ShopctlConsumerLiveTests.run(
            arguments, serving: [try ShopctlConsumerLiveTests.interaction(interaction)], as: credentials
        ) { shopctl in
            #expect(shopctl.lines.count == 1, "\(shopctl.lines)")
            let stored = try shopctl.store.load()
            #expect(stored == credentials)
        }
    }

    @Test("basket remove with an id prefix reads the basket to find the line, then removes it")
    func removeByPrefix() async throws {
        try await ShopctlConsumerLiveTests.run(
            ["basket", "remove", String(Interactions.lampLine.id.prefix(8))],
            serving: [try Interactions.getBasket(), try Interactions.removeItem()], as: try ShopctlConsumerLiveTests.credentials()
        ) { shopctl in
            let baskets = try shopctl.printed(Basket.self)
            #expect(baskets.map { $0.items.map(\.productId) } == [[Interactions.backpack.id]])
        }
    }

    @Test("basket watch prints the basket and the change, and ends cleanly when interrupted", .timeLimit(.minutes(1)))
    func watchBasket() async throws {
        try await InProcessShopctl.with { shopctl in
            try shopctl.signIn(as: try ShopctlConsumerLiveTests.credentials())
            try await MockProviders.run(consumer: "shopctl", serving: ["gateway": [try Interactions.watchBasket()]]) { mocks in
                // The stream stays open: only the interruption ends the command, which then returns normally.
                try await shopctl.watch(["basket", "watch"], gateway: mocks["gateway"], until: 2)
            }
            let baskets = try shopctl.printed(Basket.self)
            #expect(baskets.map(\.itemCount) == [2, 3])
            #expect(baskets.last?.items.map(\.productId) == [Interactions.backpack.id, CatalogInteractions.lamp.id])
        }
    }
}
