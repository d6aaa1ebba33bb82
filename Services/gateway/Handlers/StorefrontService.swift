import Contracts
import Logging
import RPC
import ServiceKit

/// `shop.gateway.v1.StorefrontService` (API.md §7): screens composed from several services
/// in one call. The upstream calls of a screen run concurrently; the parts that belong to
/// the signed-in user (favorites, basket) are optional — when their service is down or slow
/// the screen still renders without them, and the degradation is logged.
struct StorefrontService: Sendable {
    /// catalog-svc: products, categories, favorites.
    let catalog: Upstream
    /// basket-svc: the caller's basket.
    let basket: Upstream
    /// Deadlines and metadata of the upstream calls.
    let policy: ForwardingPolicy
    /// The most a user-only part may take; the screen does not wait longer for it.
    var optionalPartTimeout: Duration = .milliseconds(1500)
    /// The most favorites pages read to find one product (100 products a page).
    var maxFavoritePages = 20

    /// `GetProductPage`: the product (required), whether the caller favorited it, and the
    /// caller's basket line for it.
    func getProductPage(_ request: GetProductPageRequest, context: ServerContext) async throws -> GetProductPageResponse {
        guard request.productId > 0 else { throw RPCError.invalidField("productId", "must be a positive number", subject: "The product id") }
        let options = policy.composedOptions(for: context)
        async let product = catalog.forward(CatalogContract.getProduct.info, options: options) { call in
            try await Self.unary(CatalogContract.getProduct, GetProductRequest(id: request.productId), on: call)
        }
        async let favorite = userPart("favorites", context: context) {
            try await isFavorite(request.productId, options: optionalOptions(options))
        }
        async let line = userPart("basket", context: context) {
            try await basketNow(options: optionalOptions(options)).items.first { $0.productId == request.productId }
        }
        return GetProductPageResponse(
            product: try await product.product, isFavorite: await favorite ?? false, basketItem: await line ?? nil)
    }

    /// `GetHome`: the categories and the first page of products (required), and the size of
    /// the caller's basket.
    func getHome(_ request: GetHomeRequest, context: ServerContext) async throws -> GetHomeResponse {
        try request.validatePageSize()
        // Refused before any call goes out, as catalog-svc would refuse the listing.
        try ListProductsRequest(category: request.category).validateFilters()
        let options = policy.composedOptions(for: context)
        async let categories = catalog.forward(CatalogContract.listCategories.info, options: options) { call in
            try await Self.unary(CatalogContract.listCategories, Empty(), on: call)
        }
        async let page = catalog.forward(CatalogContract.listProducts.info, options: options) { call in
            try await Self.unary(
                CatalogContract.listProducts, ListProductsRequest(category: request.category, pageSize: request.pageSize),
                on: call)
        }
        async let count = userPart("basket", context: context) {
            try await basketNow(options: optionalOptions(options)).itemCount
        }
        let products = try await page
        return GetHomeResponse(
            categories: try await categories.categories, products: products.products,
            nextPageToken: products.nextPageToken, basketItemCount: await count ?? 0)
    }

    // MARK: Parts

    /// Whether `productId` is among the caller's favorites, reading their pages in order.
    private func isFavorite(_ productId: Int, options: CallOptions) async throws -> Bool {
        var token = ""
        for _ in 0..<maxFavoritePages {
            let page = try await catalog.forward(CatalogContract.listFavorites.info, options: options) { call in
                try await Self.unary(
                    CatalogContract.listFavorites, ListFavoritesRequest(pageSize: PageSize.maximum, pageToken: token),
                    on: call)
            }
            if page.products.contains(where: { $0.id == productId }) { return true }
            guard !page.nextPageToken.isEmpty else { return false }
            token = page.nextPageToken
        }
        return false
    }

    /// The caller's basket.
    private func basketNow(options: CallOptions) async throws -> Basket {
        try await basket.forward(BasketContract.getBasket.info, options: options) { call in
            try await Self.unary(BasketContract.getBasket, Empty(), on: call)
        }
    }

    /// `options` with the deadline of an optional part: the screen's, or sooner.
    private func optionalOptions(_ options: CallOptions) -> CallOptions {
        var options = options
        let cap = ContinuousClock.now + optionalPartTimeout
        options.deadline = min(options.deadline ?? cap, cap)
        return options
    }

    /// Runs a part that only a signed-in caller gets: nil for an anonymous caller, and nil
    /// (logged) when it fails for any reason, so the screen renders without it.
    private func userPart<Value: Sendable>(
        _ part: String, context: ServerContext, _ body: () async throws -> Value
    ) async -> Value? {
        guard context.user != nil else { return nil }
        do {
            return try await body()
        } catch {
            context.logger.warning("\(context.method.method) without \(part): \(error)")
            return nil
        }
    }

    /// One typed unary exchange on a raw call (the breaker-guarded calls of ``Upstream`` are raw).
    static func unary<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request, on call: any ClientCall
    ) async throws -> Response {
        try await call.send(try JSONCodec.shared.encode(request))
        call.finishSending()
        return try JSONCodec.shared.decode(Response.self, from: try await RPCClient.singleRawResponse(from: call))
    }
}
