import Contracts
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Testing

/// Admin methods need the admin key and internal methods the internal key, in `x-api-key`
/// (API.md §1, README "API keys"): none is `UNAUTHENTICATED`/`MISSING_API_KEY`, any other
/// value `PERMISSION_DENIED`/`INVALID_API_KEY`, and neither key opens the other's methods.
@Suite("API keys")
struct AdminKeyTests {
    /// A protected method, and whether it takes the admin key (else the internal key).
    enum Protected: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case upsertProduct = "UpsertProduct"
        case deleteProduct = "DeleteProduct"
        case importProducts = "ImportProducts"
        case reserveStock = "ReserveStock"
        case releaseStock = "ReleaseStock"

        var testDescription: String { rawValue }

        /// The method's path.
        var path: String { "/\(CatalogContract.service)/\(rawValue)" }

        /// Whether the admin key opens it.
        var isAdmin: Bool { [.upsertProduct, .deleteProduct, .importProducts].contains(self) }

        /// A request message that would succeed with the right key, about `product`.
        func message(about product: Product) throws -> String {
            switch self {
            case .upsertProduct:
                var changed = product
                changed.title = "Changed by a refused call"
                return try UpsertProductRequest(product: changed).jsonText()
            case .deleteProduct: return try DeleteProductRequest(id: product.id).jsonText()
            case .importProducts: return try ImportProductsRequest(product: SampleProducts.make("Imported by a refused call")).jsonText()
            case .reserveStock:
                return try ReserveStockRequest(reservationId: "refused", items: [StockReservationItem(productId: product.id, count: 1)])
                    .jsonText()
            case .releaseStock: return try ReleaseStockRequest(reservationId: "refused").jsonText()
            }
        }
    }

    /// The `x-api-key` values (or other credentials) that must be refused for `method`, each
    /// with the reason.
    static func refusedKeys(for method: Protected, of stack: CatalogStack, session: Session) -> [(String, Metadata, APIKeyReason)] {
        let right = method.isAdmin ? stack.adminKey : stack.internalKey
        let other = method.isAdmin ? stack.internalKey : stack.adminKey
        return [
            ("no key", Metadata(), .missingAPIKey),
            ("an empty key", [MetadataKey.apiKey: ""], .missingAPIKey),
            ("a user's access token", [MetadataKey.authorization: "Bearer \(session.accessToken)"], .missingAPIKey),
            ("a random key", [MetadataKey.apiKey: TestScratch.randomKey()], .invalidAPIKey),
            ("the other key", [MetadataKey.apiKey: other], .invalidAPIKey),
            ("half the right key", [MetadataKey.apiKey: String(right.prefix(right.count / 2))], .invalidAPIKey),
            ("the right key in upper case", [MetadataKey.apiKey: right.uppercased()], .invalidAPIKey),
            ("the right key with a letter added", [MetadataKey.apiKey: right + "0"], .invalidAPIKey),
        ]
    }

    @Test("a protected method refuses every key but its own, and changes nothing", arguments: Protected.allCases)
    func refused(method: Protected) async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            let before = try await stack.allProducts()
            let product = try #require(before.first)
            let message = try method.message(about: product)
            for (name, metadata, reason) in Self.refusedKeys(for: method, of: stack, session: session) {
                let error = await expectRPCError(reason) { try await stack.rawCall(method.path, [message], metadata: metadata) }
                #expect(error != nil, "\(name)")
            }
            #expect(try await stack.allProducts() == before)
        }
    }

    @Test("a protected method accepts its own key", arguments: Protected.allCases)
    func accepted(method: Protected) async throws {
        try await withCatalogService { stack in
            let product = try #require(try await stack.allProducts().first)
            let key = method.isAdmin ? stack.adminKey : stack.internalKey
            let responses = try await stack.rawCall(
                method.path, [try method.message(about: product)], metadata: [MetadataKey.apiKey: key])
            #expect(responses.count == 1)
        }
    }

    @Test("public methods ignore an x-api-key, even a wrong one")
    func publicMethodsIgnoreKeys() async throws {
        try await withCatalogService { stack in
            let options = stack.apiKey("not-a-key")
            let page = try await stack.catalogClient.unary(CatalogContract.listProducts, ListProductsRequest(), options: options)
            #expect(!page.products.isEmpty)
            _ = try await stack.catalogClient.unary(CatalogContract.listCategories, Empty(), options: options)
        }
    }
}
