import Contracts
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `UpsertProduct` (API.md §4, README "Choices"): id 0 or absent creates, an existing id
/// replaces, an unused id creates under that id; every rule of the README's validation is
/// `INVALID_ARGUMENT` with a field violation, and the values at each limit are accepted.
@Suite("UpsertProduct")
struct UpsertProductTests {
    @Test("id 0 creates a product with a new id that every read then returns")
    func create() async throws {
        try await withCatalogService { stack in
            let before = try await stack.allProducts()
            let sent = SampleProducts.make("Copper watering can", description: "Holds two litres.", category: "garden", price: 3_450)
            let created = try await stack.upsert(sent)
            #expect(created.id > 0 && !before.map(\.id).contains(created.id))
            #expect(SampleProducts.withoutID(created) == sent)
            #expect(try await stack.product(created.id) == created)
            #expect(try await stack.allProducts() == before + [created])
            let again = try await stack.upsert(sent)
            #expect(again.id != created.id, "each id-0 upsert creates a product")
        }
    }

    @Test("a product without an id member creates one")
    func createWithoutID() async throws {
        try await withCatalogService { stack in
            let json = #"{"product":{"title":"Bamboo steamer","description":"Two tiers.","category":"kitchen","#
                + #""price":{"amount":2100,"currency":"EUR"},"image":"","rating":{"rate":0,"count":0},"stock":3}}"#
            let responses = try await stack.rawCall(CatalogContract.upsertProduct.path, [json], metadata: stack.asAdmin.metadata)
            let created = try JSONCodec.shared.decode(ProductResponse.self, from: try #require(responses.first)).product
            #expect(created.id > 0 && created.title == "Bamboo steamer" && created.price == Money(amount: 2_100, currency: "EUR"))
            #expect(try await stack.product(created.id) == created)
        }
    }

    @Test("products created at the same time get distinct ids")
    func concurrentCreates() async throws {
        try await withCatalogService { stack in
            let ids = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask { try await stack.upsert(SampleProducts.make("Concurrent \(index)")).id }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(ids).count == 20)
            #expect(try await stack.listProducts(ListProductsRequest(query: "concurrent")).totalSize == 20)
        }
    }

    @Test("an existing id replaces that product, and the categories follow")
    func replace() async throws {
        try await withCatalogService { stack in
            let original = try await stack.upsert(SampleProducts.make("Oak stool", category: "furniture", stock: 4))
            let count = try await stack.listProducts().totalSize
            var changed = SampleProducts.make("Oak bar stool", description: "Taller.", category: "seating", price: 8_800, stock: 9)
            changed.id = original.id
            let replaced = try await stack.upsert(changed)
            #expect(replaced == changed)
            #expect(try await stack.product(original.id) == changed)
            #expect(try await stack.listProducts().totalSize == count)
            let names = try await stack.categories().map(\.name)
            #expect(names.contains("seating") && !names.contains("furniture"))
        }
    }

    @Test("an id no product has yet creates the product under that id")
    func createWithChosenID() async throws {
        try await withCatalogService { stack in
            var product = SampleProducts.make("Numbered lantern")
            product.id = 70_000
            #expect(try await stack.upsert(product) == product)
            #expect(try await stack.product(70_000) == product)
            let next = try await stack.upsert(SampleProducts.make("Unnumbered lantern"))
            #expect(next.id != 70_000)
        }
    }

    /// A product that breaks one validation rule, and the field the violation must name.
    struct Invalid: Sendable, CustomTestStringConvertible {
        /// The rule broken, for the test report.
        var testDescription: String
        /// The field the violation must name.
        var field: String
        /// Breaks the rule in a valid product.
        var change: @Sendable (inout Product) -> Void

        /// One entry per rule and side of its limit.
        static let all = [
            Invalid(testDescription: "an empty title", field: "title") { $0.title = "" },
            Invalid(testDescription: "a title of 201 characters", field: "title") { $0.title = String(repeating: "t", count: 201) },
            Invalid(testDescription: "a description of 5001 characters", field: "description") {
                $0.description = String(repeating: "d", count: 5_001)
            },
            Invalid(testDescription: "an empty category", field: "category") { $0.category = "" },
            Invalid(testDescription: "a category of 101 characters", field: "category") {
                $0.category = String(repeating: "c", count: 101)
            },
            Invalid(testDescription: "a negative price", field: "price.amount") { $0.price.amount = -1 },
            Invalid(testDescription: "a lower-case currency", field: "price.currency") { $0.price.currency = "usd" },
            Invalid(testDescription: "a two-letter currency", field: "price.currency") { $0.price.currency = "US" },
            Invalid(testDescription: "a four-letter currency", field: "price.currency") { $0.price.currency = "USDT" },
            Invalid(testDescription: "an empty currency", field: "price.currency") { $0.price.currency = "" },
            Invalid(testDescription: "an ftp image URL", field: "image") { $0.image = "ftp://images.example.com/a.png" },
            Invalid(testDescription: "an image that is no URL", field: "image") { $0.image = "a picture of a cat" },
            Invalid(testDescription: "a javascript: image", field: "image") { $0.image = "javascript:alert(1)" },
            Invalid(testDescription: "an image URL of 2049 characters", field: "image") {
                $0.image = "https://example.com/" + String(repeating: "i", count: 2_049 - 20)
            },
            Invalid(testDescription: "a rate below 0", field: "rating.rate") { $0.rating.rate = -0.1 },
            Invalid(testDescription: "a rate above 5", field: "rating.rate") { $0.rating.rate = 5.01 },
            Invalid(testDescription: "a negative rating count", field: "rating.count") { $0.rating.count = -1 },
            Invalid(testDescription: "negative stock", field: "stock") { $0.stock = -1 },
            Invalid(testDescription: "stock above 1,000,000,000", field: "stock") { $0.stock = 1_000_000_001 },
            Invalid(testDescription: "stock of Int.max", field: "stock") { $0.stock = .max },
            Invalid(testDescription: "a negative id", field: "id") { $0.id = -5 },
        ]
    }

    @Test("an invalid product is INVALID_ARGUMENT naming the field, and nothing is stored", arguments: Invalid.all)
    func invalid(rule: Invalid) async throws {
        try await withCatalogService { stack in
            let before = try await stack.allProducts()
            var product = SampleProducts.make("Rule breaker")
            rule.change(&product)
            let error = await expectRPCError(.invalidArgument, reason: nil) { try await stack.upsert(product) }
            #expect(error?.namesField(rule.field) == true, "\(error?.violatedFields ?? [])")
            #expect(try await stack.allProducts() == before)
        }
    }

    @Test("an invalid replacement leaves the stored product as it was")
    func invalidReplacement() async throws {
        try await withCatalogService { stack in
            let stored = try await stack.upsert(SampleProducts.make("Steady shelf"))
            var broken = stored
            broken.title = ""
            broken.stock = 1_000
            await expectRPCError(.invalidArgument, reason: nil) { try await stack.upsert(broken) }
            #expect(try await stack.product(stored.id) == stored)
        }
    }

    @Test("the value at each limit is accepted")
    func limitsAccepted() async throws {
        try await withCatalogService { stack in
            var product = SampleProducts.make(String(repeating: "é", count: 200))
            product.description = String(repeating: "d", count: 5_000)
            product.category = String(repeating: "c", count: 100)
            product.price = Money(amount: 0, currency: "JPY")
            product.image = "http://example.com/" + String(repeating: "i", count: 2_048 - 19)
            product.rating = Rating(rate: 5, count: 0)
            product.stock = 0
            let created = try await stack.upsert(product)
            #expect(SampleProducts.withoutID(created) == product)
            product.description = ""
            product.image = ""
            product.rating.rate = 0
            product.stock = 1_000_000_000
            product.id = created.id
            #expect(try await stack.upsert(product) == product)
        }
    }
}
