import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import shopctl

/// The real `shopctl` against the real gateway and services: a shopper's whole journey.
@Suite("shopctl live: a shopper's journey through the gateway", .serialized)
struct ShopperJourneyLiveTests {
    @Test("sign up, browse, favorite, fill the basket while a watch prints it, pay, and sign out")
    func journey() async throws {
        try await withShopctlStack { stack in
            let shopctl = try stack.shopctl()
            try await shopctl.waitUntilServing()
            let email = LiveFixtures.newEmail()

            // Account: password from standard input, token from the delivered email.
            try await shopctl.signUpAndSignIn(email, password: LiveFixtures.password, mailbox: stack.mailbox)
            let attributes = try FileManager.default.attributesOfItem(atPath: shopctl.paths.credentials.path)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
            let whoami = try await shopctl.succeed(["auth", "whoami"])
            #expect(whoami.output.contains("Email:"))
            #expect(whoami.output.contains("\(email) (verified)"))
            let me = try ShopctlJSON.decode(UserResponse.self, try await shopctl.succeed(["--json", "auth", "whoami"]).output)
            #expect(me.user.email == email)

            // Catalog: a table for people, the raw message for scripts.
            let page = try ShopctlJSON.decode(
                ListProductsResponse.self, try await shopctl.succeed(["--json", "products", "list", "--page-size", "5"]).output)
            #expect(page.products.count == 5)
            #expect(!page.nextPageToken.isEmpty)
            let product = try #require(page.products.first)
            let table = try await shopctl.succeed(["products", "list", "--page-size", "5"])
            #expect(table.lines.first?.hasPrefix("ID  TITLE") == true, "\(table)")
            #expect(table.output.contains(MoneyText.format(product.price)))
            #expect(table.output.contains("More: shopctl products list --page-size 5 --page-token "))
            let word = try #require(product.title.split(separator: " ").first { $0.count >= 4 && $0.allSatisfy(\.isLetter) })
            let found = try ShopctlJSON.decode(
                ListProductsResponse.self, try await shopctl.succeed(["products", "list", "--search", String(word), "--json"]).output)
            #expect(found.products.contains { $0.id == product.id }, "searching \(word)")
            let shown = try await shopctl.succeed(["products", "show", String(product.id)])
            #expect(shown.output.hasPrefix("#\(product.id) \(product.title)"))
            #expect(shown.output.contains("Price:     \(MoneyText.format(product.price))"))
            let missing = try await shopctl.run(["products", "show", "999999"])
            #expect(missing.status == 4)
            #expect(missing.errors.hasPrefix("error: PRODUCT_NOT_FOUND: "), "\(missing)")
            #expect(missing.errors.contains("(check the id with `shopctl products list`)"))
            let categories = try await shopctl.succeed(["categories"])
            #expect(categories.output.contains(product.category))

            // Favorites.
            try await shopctl.succeed(["favorites", "add", String(product.id)])
            let favorites = try ShopctlJSON.decode(
                ListFavoritesResponse.self, try await shopctl.succeed(["favorites", "list", "--json"]).output)
            #expect(favorites.products.map(\.id) == [product.id])

            // A second shopctl watches the basket and prints every change as one JSON line.
            let watch = try shopctl.start(["--json", "basket", "watch"])
            let initial = await watch.output.first(within: .seconds(15)) { line in
                try? JSONCodec.shared.decode(Basket.self, from: Data(line.utf8))
            }
            #expect(initial?.items.isEmpty == true, "watch: \(watch.errors.tail())")

            let added = try ShopctlJSON.decode(
                Basket.self, try await shopctl.succeed(["--json", "basket", "add", String(product.id), "--count", "2"]).output)
            let line = try #require(added.items.first)
            #expect(line.count == 2 && line.productId == product.id)
            let again = try await shopctl.run(["basket", "add", String(product.id)])
            #expect(again.status == 4)
            #expect(again.errors.hasPrefix("error: ALREADY_IN_BASKET: The product is already in basket."), "\(again)")
            let changed = try await shopctl.succeed(["basket", "set", String(line.id.prefix(8)), "3"])
            #expect(changed.output.contains("3 items, total \(MoneyText.format(product.price.multiplied(by: 3)))."), "\(changed)")
            let basket = try ShopctlJSON.decode(Basket.self, try await shopctl.succeed(["basket", "show", "--json"]).output)
            #expect(basket.itemCount == 3)

            let sawThree = await watch.output.first(within: .seconds(10)) { line -> Bool? in
                guard let update = try? JSONCodec.shared.decode(Basket.self, from: Data(line.utf8)) else { return nil }
                return update.itemCount == 3 ? true : nil
            }
            #expect(sawThree == true, "watch printed: \(watch.output.lines)")
            let updates = try ShopctlJSON.decodeLines(Basket.self, watch.output.lines)
            #expect(updates.map(\.version) == updates.map(\.version).sorted())
            #expect(await watch.stop(with: SIGINT) == 0, "watch errors: \(watch.errors.tail())")

            // Paying: a declined card is a clear refusal and leaves the basket; a good one pays.
            let declined = try await shopctl.run(
                ["order", "place"] + LiveFixtures.addressFlags + LiveFixtures.cardFlags("4000000000000002"))
            #expect(declined.status == 4)
            #expect(declined.errors.hasPrefix("error: PAYMENT_DECLINED: "), "\(declined)")
            #expect(declined.errors.contains("try another card"))
            #expect(declined.output.isEmpty)
            let kept = try ShopctlJSON.decode(Basket.self, try await shopctl.succeed(["--json", "basket", "show"]).output)
            #expect(kept.itemCount == 3)

            let badExpiry = try await shopctl.run(
                ["order", "place"] + LiveFixtures.addressFlags + ["--card", "4242424242424242", "--exp", "13/30", "--cvc", "123"])
            #expect(badExpiry.status == 2)
            #expect(badExpiry.errors.contains("--exp must be MM/YY"), "\(badExpiry)")

            let placed = try await shopctl.succeed(
                ["--json", "order", "place"] + LiveFixtures.addressFlags + LiveFixtures.cardFlags("4242424242424242"))
            let order = try ShopctlJSON.decode(Order.self, placed.output)
            #expect(order.status == .paid)
            #expect(order.total == product.price.multiplied(by: 3))
            #expect(order.payment?.last4 == "4242")

            let orders = try await shopctl.succeed(["order", "list"])
            #expect(orders.lines.first?.hasPrefix("ORDER") == true)
            #expect(orders.output.contains(order.id))
            let listed = try ShopctlJSON.decode(ListOrdersResponse.self, try await shopctl.succeed(["order", "list", "--json"]).output)
            #expect(listed.orders.first?.id == order.id)
            #expect(listed.orders.contains { $0.status == .paymentFailed })
            let detail = try await shopctl.succeed(["order", "show", order.id])
            #expect(detail.output.hasPrefix("Order \(order.id): PAID"))
            #expect(detail.output.contains("visa ending in 4242"))
            let empty = try await shopctl.succeed(["basket", "show"])
            #expect(empty.output == "Your basket is empty.\n")

            // Any method by name, and what the gateway serves.
            let call = try await shopctl.succeed(["call", "shop.catalog.v1.CatalogService/GetProduct", "{\"id\": \(product.id)}"])
            #expect(call.output.hasPrefix("{\n  \"product\": {"))
            let raw = try await shopctl.succeed(["--json", "call", "/shop.basket.v1.BasketService/GetBasket"])
            #expect(try ShopctlJSON.decode(Basket.self, raw.output).items.isEmpty)
            let described = try await shopctl.succeed(["describe", "catalog"])
            #expect(described.lines.first == "shop.catalog.v1.CatalogService")
            #expect(described.output.contains("ListProducts"))

            // Signing out forgets the session.
            try await shopctl.succeed(["auth", "logout"])
            #expect(!FileManager.default.fileExists(atPath: shopctl.paths.credentials.path))
            let signedOut = try await shopctl.run(["basket", "show"])
            #expect(signedOut.status == 3)
            #expect(signedOut.errors.hasPrefix("error: NOT_SIGNED_IN: You are not signed in."))
        }
    }
}
