import Contracts
import RPC
import ServiceKit

/// Favorites of the signed-in user; the user is always the token's subject.
extension CatalogService {
    /// `AddFavorite` (idempotent).
    func addFavorite(_ request: AddFavoriteRequest, context: ServerContext) async throws -> Empty {
        let user = try context.requireUser()
        guard try await store.addFavorite(userID: user.id, productID: request.productId) else {
            throw CatalogError.productNotFound(id: request.productId)
        }
        return Empty()
    }

    /// `RemoveFavorite` (idempotent).
    func removeFavorite(_ request: RemoveFavoriteRequest, context: ServerContext) async throws -> Empty {
        let user = try context.requireUser()
        try await store.removeFavorite(userID: user.id, productID: request.productId)
        return Empty()
    }

    /// Where a favorites page ends: the favorite's own sequence number.
    struct FavoriteCursor: Codable, Sendable {
        /// The sequence number of the last favorite on the page.
        var before: Int64
    }

    /// `ListFavorites`: newest first.
    func listFavorites(_ request: ListFavoritesRequest, context: ServerContext) async throws -> ListFavoritesResponse {
        let user = try context.requireUser()
        try request.validatePageSize()
        let scope = "favorites|\(user.id)"
        let cursor = try decodeToken(request.effectivePageToken, as: FavoriteCursor.self, scope: scope)
        let (products, next) = try await store.favorites(
            userID: user.id, before: cursor?.before, limit: request.effectivePageSize)
        return ListFavoritesResponse(
            products: products,
            nextPageToken: next.map { pageTokens.encode(FavoriteCursor(before: $0), scope: scope) } ?? "")
    }
}
