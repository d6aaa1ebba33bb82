import Contracts
import Foundation
import RPC
import ServiceKit

/// The handlers of `shop.catalog.v1.CatalogService` (API.md §4): browsing here, favorites,
/// admin and stock methods in the `CatalogService+…` extensions. Its dependencies are stored
/// properties; the state lives in the store.
struct CatalogService: Sendable {
    /// The database.
    let store: CatalogStore
    /// Signs and checks page tokens.
    let pageTokens: PageTokens
    /// Reservations released counted.
    let metrics: CatalogMetrics

    /// `ListProducts`.
    func listProducts(_ request: ListProductsRequest, context: ServerContext) async throws -> ListProductsResponse {
        try request.validatePageSize()
        try request.validateFilters()
        let category = request.category.flatMap { $0.isEmpty ? nil : $0 }
        let query = request.query.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        let words = query.map(SearchQuery.words(of:))
        let filter = CatalogStore.ProductFilter(category: category, search: words, sort: request.effectiveSort)
        // The scope binds a token to the listing it came from.
        let scope = "products|\(category?.lowercased() ?? "")|\(query ?? "")|\(filter.sort.rawValue)"
        let cursor = try decodeToken(request.effectivePageToken, as: CatalogStore.ProductCursor.self, scope: scope)
        if words?.isEmpty == true {
            return ListProductsResponse(products: [], totalSize: 0)  // a query without words matches nothing
        }
        let page = try await store.listProducts(filter, after: cursor, limit: request.effectivePageSize)
        // Only a search that finds nothing is worth correcting; the answer still lists what the
        // query as asked finds (nothing), so totalSize and page tokens keep their meaning.
        var suggestion: String?
        if page.total == 0, let words { suggestion = try await store.suggestion(for: words, category: category) }
        return ListProductsResponse(
            products: page.products, nextPageToken: page.next.map { pageTokens.encode($0, scope: scope) } ?? "",
            totalSize: page.total, suggestion: suggestion)
    }

    /// `ListProducts`, encoded: the answer kept for the same request since products last
    /// changed (`CatalogStore.answers`), else `listProducts(_:context:)`'s, then kept. A request
    /// that fails is never kept, so a kept answer's request passed every check before.
    func listProductsAnswer(_ request: ListProductsRequest, context: ServerContext) async throws -> Data {
        if let kept = store.answers?.answer(for: .listing(request)) { return kept }
        let generation = store.answers?.generation ?? 0
        let answer = try JSONCodec.shared.encode(try await listProducts(request, context: context))
        store.answers?.keep(answer, for: .listing(request), readAt: generation)
        return answer
    }

    /// `GetProduct`, answered without a task where it can be — the answer kept from an earlier
    /// read (`CatalogStore.answers`), else the product read on the event loop that holds the
    /// call (`Database.shortReadNow`) — and read in a task otherwise. Each answer read is kept.
    func getProduct(_ request: Data, context: ServerContext, responder: CallResponder) {
        let id: Int
        do {
            id = try JSONCodec.shared.decode(GetProductRequest.self, from: request).id
        } catch {
            return responder.respond(.failure(error))
        }
        if let kept = store.answers?.answer(for: .product(id)) { return responder.respond(.success(kept)) }
        let generation = store.answers?.generation ?? 0
        if let read = store.productNow(id: id) {
            return responder.respond(Result { try productAnswer(try read.get(), id: id, readAt: generation) })
        }
        let task = Task {
            do {
                let product = try await store.product(id: id)
                responder.respond(.success(try productAnswer(product, id: id, readAt: generation)))
            } catch {
                responder.respond(.failure(error))
            }
        }
        responder.onCancel { task.cancel() }
    }

    /// The encoded answer for the product read after `generation` was taken, kept for the next
    /// call; `NOT_FOUND` when there is none.
    private func productAnswer(_ product: Product?, id: Int, readAt generation: UInt64) throws -> Data {
        guard let product else { throw CatalogError.productNotFound(id: id) }
        let answer = try JSONCodec.shared.encode(ProductResponse(product: product))
        store.answers?.keep(answer, for: .product(id), readAt: generation)
        return answer
    }

    /// `BatchGetProducts`: in the order asked, each once; unknown ids in `missingIds`.
    func batchGetProducts(_ request: BatchGetProductsRequest, context: ServerContext) async throws -> BatchGetProductsResponse {
        guard request.ids.count <= CatalogContract.maxBatchSize else {
            throw CatalogReason.tooManyIDs.invalidField("ids", "must list at most \(CatalogContract.maxBatchSize) ids", subject: "The request")
        }
        var seen = Set<Int>()
        let ids = request.ids.filter { seen.insert($0).inserted }
        let found = try await store.products(ids: ids)
        return BatchGetProductsResponse(products: ids.compactMap { found[$0] }, missingIds: ids.filter { found[$0] == nil })
    }

    /// `ListCategories`.
    func listCategories(_ request: Empty, context: ServerContext) async throws -> ListCategoriesResponse {
        ListCategoriesResponse(categories: try await store.categories())
    }

    // MARK: Helpers

    /// The cursor of a page token ("" is the first page); `INVALID_PAGE_TOKEN` for one that is
    /// not ours or belongs to another listing.
    func decodeToken<Cursor: Decodable>(_ token: String, as type: Cursor.Type, scope: String) throws(RPCError) -> Cursor? {
        guard !token.isEmpty else { return nil }
        guard let cursor = pageTokens.decode(token, as: Cursor.self, scope: scope) else {
            throw CatalogError.invalidPageToken.rpcError
        }
        return cursor
    }
}
