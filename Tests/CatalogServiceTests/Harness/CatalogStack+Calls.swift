import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// Call options, and the catalog calls most tests make, typed as API.md §4 writes them.
extension CatalogStack {
    /// Options with a timeout and no credentials.
    func plain(timeout: Duration = .seconds(15)) -> CallOptions {
        CallOptions(timeout: timeout)
    }

    /// Options carrying `authorization: Bearer <token>`.
    func bearer(_ token: String, timeout: Duration = .seconds(15)) -> CallOptions {
        CallOptions(metadata: [MetadataKey.authorization: "Bearer \(token)"], timeout: timeout)
    }

    /// Options carrying `session`'s access token.
    func signedIn(_ session: Session) -> CallOptions {
        bearer(session.accessToken)
    }

    /// Options carrying `x-api-key: <key>`.
    func apiKey(_ key: String, timeout: Duration = .seconds(15)) -> CallOptions {
        CallOptions(metadata: [MetadataKey.apiKey: key], timeout: timeout)
    }

    /// Options carrying the admin key.
    var asAdmin: CallOptions { apiKey(adminKey) }

    /// Options carrying the internal key.
    var asInternal: CallOptions { apiKey(internalKey) }

    /// One `ListProducts` page.
    func listProducts(_ request: ListProductsRequest = ListProductsRequest()) async throws -> ListProductsResponse {
        try await catalogClient.unary(CatalogContract.listProducts, request, options: plain())
    }

    /// Every product `request` matches, page after page of `pageSize`; records an issue if
    /// the pages never end or a non-last page is short.
    func allProducts(
        _ request: ListProductsRequest = ListProductsRequest(), pageSize: Int = 100,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [Product] {
        var request = request
        request.pageSize = pageSize
        var products: [Product] = []
        for _ in 0..<10_000 {
            let page = try await listProducts(request)
            products += page.products
            if page.nextPageToken.isEmpty { return products }
            #expect(page.products.count == pageSize, "a page before the last one is short", sourceLocation: sourceLocation)
            request.pageToken = page.nextPageToken
        }
        Issue.record("ListProducts pages never ended", sourceLocation: sourceLocation)
        return products
    }

    /// `GetProduct`.
    func product(_ id: Int) async throws -> Product {
        try await catalogClient.unary(CatalogContract.getProduct, GetProductRequest(id: id), options: plain()).product
    }

    /// `ListCategories`.
    func categories() async throws -> [Category] {
        try await catalogClient.unary(CatalogContract.listCategories, Empty(), options: plain()).categories
    }

    /// `UpsertProduct` with the admin key; returns the stored product.
    @discardableResult
    func upsert(_ product: Product) async throws -> Product {
        try await catalogClient.unary(CatalogContract.upsertProduct, UpsertProductRequest(product: product), options: asAdmin)
            .product
    }

    /// `DeleteProduct` with the admin key.
    func delete(_ id: Int) async throws {
        _ = try await catalogClient.unary(CatalogContract.deleteProduct, DeleteProductRequest(id: id), options: asAdmin)
    }

    /// `ImportProducts` with the admin key: streams `products` in order.
    @discardableResult
    func importProducts(_ products: [Product], timeout: Duration = .seconds(60)) async throws -> ImportProductsResponse {
        try await catalogClient.clientStreaming(CatalogContract.importProducts, options: apiKey(adminKey, timeout: timeout)) {
            sender in
            for product in products { try await sender.send(ImportProductsRequest(product: product)) }
        }
    }

    /// `ImportProducts` with the admin key, of messages as they are sent: JSON or not.
    func importRawMessages(_ messages: [Data]) async throws -> ImportProductsResponse {
        try await catalogClient.withCall(path: CatalogContract.importProducts.path, options: asAdmin) { call in
            for message in messages { try await call.send(message) }
            call.finishSending()
            guard let answer = try await call.nextMessage() else { throw RPCError(code: .internal, message: "no answer") }
            return try JSONCodec.shared.decode(ImportProductsResponse.self, from: answer)
        }
    }

    /// `ReserveStock` with the internal key; `items` are (product id, count) pairs.
    func reserve(_ reservationId: String, _ items: [(productId: Int, count: Int)]) async throws {
        let lines = items.map { StockReservationItem(productId: $0.productId, count: $0.count) }
        _ = try await catalogClient.unary(
            CatalogContract.reserveStock, ReserveStockRequest(reservationId: reservationId, items: lines),
            options: asInternal)
    }

    /// `ReleaseStock` with the internal key.
    func release(_ reservationId: String) async throws {
        _ = try await catalogClient.unary(
            CatalogContract.releaseStock, ReleaseStockRequest(reservationId: reservationId), options: asInternal)
    }

    /// `AddFavorite` as `session`'s user.
    func addFavorite(_ productId: Int, as session: Session) async throws {
        _ = try await catalogClient.unary(
            CatalogContract.addFavorite, AddFavoriteRequest(productId: productId), options: signedIn(session))
    }

    /// `RemoveFavorite` as `session`'s user.
    func removeFavorite(_ productId: Int, as session: Session) async throws {
        _ = try await catalogClient.unary(
            CatalogContract.removeFavorite, RemoveFavoriteRequest(productId: productId), options: signedIn(session))
    }

    /// One `ListFavorites` page of `session`'s user.
    func favorites(
        of session: Session, pageSize: Int? = nil, pageToken: String? = nil
    ) async throws -> ListFavoritesResponse {
        try await catalogClient.unary(
            CatalogContract.listFavorites, PageRequest(pageSize: pageSize, pageToken: pageToken),
            options: signedIn(session))
    }

    /// The ids of all of `session`'s user's favorites, page after page, in the order served.
    func favoriteIDs(of session: Session, pageSize: Int = 100) async throws -> [Int] {
        var ids: [Int] = []
        var token: String?
        for _ in 0..<1_000 {
            let page = try await favorites(of: session, pageSize: pageSize, pageToken: token)
            ids += page.products.map(\.id)
            if page.nextPageToken.isEmpty { break }
            token = page.nextPageToken
        }
        return ids
    }

    /// Sends each of `messages` (JSON texts) on a call of `path`, half-closes, and collects
    /// the response messages: for bodies no typed request can express.
    func rawCall(
        _ path: String, _ messages: [String], metadata: Metadata = Metadata(), timeout: Duration = .seconds(15)
    ) async throws -> [Data] {
        try await catalogClient.withCall(path: path, options: CallOptions(metadata: metadata, timeout: timeout)) { call in
            for message in messages { try await call.send(Data(message.utf8)) }
            call.finishSending()
            var responses: [Data] = []
            while let response = try await call.nextMessage() { responses.append(response) }
            return responses
        }
    }

    /// Whether catalog-svc still answers: its health check says SERVING and a public read works.
    func isServing() async -> Bool {
        guard let health = try? await catalogClient.unary(HealthContract.check, HealthCheckRequest(), options: plain()),
            health.status == .serving
        else { return false }
        return (try? await categories()) != nil
    }
}
