import Contracts
import RPC

extension CatalogService {
    /// Registers every method of `CatalogService` on `router`.
    func register(on router: inout Router) {
        router.register(CatalogContract.listProducts.info) { io, context in
            let request = try JSONCodec.shared.decode(ListProductsRequest.self, from: try await Router.singleRawRequest(from: io))
            try await io.write(try await listProductsAnswer(request, context: context))
        }
        router.registerCallback(CatalogContract.getProduct.info, handler: getProduct)
        router.unary(CatalogContract.batchGetProducts, batchGetProducts)
        router.unary(CatalogContract.listCategories, listCategories)
        router.unary(CatalogContract.addFavorite, addFavorite)
        router.unary(CatalogContract.removeFavorite, removeFavorite)
        router.unary(CatalogContract.listFavorites, listFavorites)
        router.unary(CatalogContract.upsertProduct, upsertProduct)
        router.unary(CatalogContract.deleteProduct, deleteProduct)
        router.clientStreaming(CatalogContract.importProducts, importProducts)
        router.unary(CatalogContract.reserveStock, reserveStock)
        router.unary(CatalogContract.releaseStock, releaseStock)
    }
}
