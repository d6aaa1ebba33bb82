import ContractTesting
import Contracts
import Foundation
@testable import shopctl
import Testing

/// `shopctl admin products …` with the admin key from `SHOP_ADMIN_API_KEY`, `health` and
/// `describe`, against the gateway played from shopctl's contract.
@Suite("shopctl's admin and process commands as a consumer")
struct ShopctlAdminConsumerLiveTests {
    /// shopctl's interactions with the gateway.
    typealias Interactions = ShopctlInteractions

    /// The environment of an admin: the key the recorded examples show.
    static let admin = ["SHOP_ADMIN_API_KEY": "contract-test-admin-key"]

    @Test("admin products upsert and delete send the admin key from the environment")
    func upsertAndDelete() async throws {
        let jacket = Interactions.rainJacket
        try await ShopctlConsumerLiveTests.run(
            [
                "admin", "products", "upsert", "--title", jacket.title, "--description", jacket.description, "--category",
                jacket.category, "--price", "89.00", "--image", jacket.image, "--stock", String(jacket.stock),
            ],
            serving: [try Interactions.upsertProduct()], environment: Self.admin
        ) { shopctl in
            let saved = try shopctl.printed(ProductResponse.self)
            #expect(saved.map(\.product.title) == [jacket.title])
        }
        try await ShopctlConsumerLiveTests.run(
            ["admin", "products", "delete", "7"], serving: [try Interactions.deleteProduct()], environment: Self.admin)
    }

    @Test("admin products import sends one message per product of the file in one client stream")
    func importProducts() async throws {
        try await InProcessShopctl.with { shopctl in
            let file = shopctl.configHome.appendingPathComponent("products.jsonl")
            let lines = try [Interactions.rainJacket, Interactions.thermos].map {
                String(decoding: try JSONEncoder().encode($0), as: UTF8.self)
            }
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            try await MockProviders.run(consumer: "shopctl", serving: ["gateway": [try Interactions.importProducts()]]) { mocks in
                try await shopctl.run(["admin", "products", "import", file.path], gateway: mocks["gateway"], environment: Self.admin)
            }
            let result = try #require(try shopctl.printed(ImportProductsResponse.self).first)
            #expect(result.created == 2 && result.failed.isEmpty)
        }
    }

    @Test("health and describe ask the gateway about itself", arguments: [
        (["health"], "Health Check for health"), (["describe"], "Describe for describe"),
    ])
    func processCommand(arguments: [String], interaction: String) async throws {
        try await ShopctlConsumerLiveTests.run(arguments, serving: [try ShopctlConsumerLiveTests.interaction(interaction)]) { shopctl in
            #expect(shopctl.lines.count == 1, "\(shopctl.lines)")
        }
    }
}
