import Contracts
import Foundation
import RPC

/// The signed-in user's favorite products (a wish list kept on the server, on every device).
extension StorefrontCatalog {
    /// The signed-in user's favorites, most recently added first, `pageSize` (at most 100) a page.
    ///
    /// Iterating throws `.unauthenticated` (`.missingToken`) when signed out, `.invalidPageToken`.
    public func favorites(pageSize: Int = 20) -> FavoritePages {
        FavoritePages { [calls] pageToken throws(StorefrontError) in
            let answer = try await calls.signedIn(CatalogContract.listFavorites, ListFavoritesRequest(pageSize: pageSize, pageToken: pageToken))
            return (answer.products, answer.nextPageToken)
        }
    }

    /// Marks the product `productID` as a favorite of the signed-in user; marking it again
    /// does nothing.
    ///
    /// - Throws: `.productNotFound`; `.unauthenticated` when signed out.
    public func addFavorite(productID: Int) async throws(StorefrontError) {
        _ = try await calls.signedIn(CatalogContract.addFavorite, AddFavoriteRequest(productId: productID))
    }

    /// Unmarks the favorite `productID`; unmarking a product that is none does nothing.
    ///
    /// - Throws: `.unauthenticated` when signed out.
    public func removeFavorite(productID: Int) async throws(StorefrontError) {
        _ = try await calls.signedIn(CatalogContract.removeFavorite, RemoveFavoriteRequest(productId: productID))
    }
}
