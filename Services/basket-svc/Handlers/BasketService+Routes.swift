import Contracts
import RPC

extension BasketService {
    /// Registers every method of `BasketService` on `router`.
    func register(on router: inout Router) {
        router.unary(BasketContract.getBasket, getBasket)
        router.unary(BasketContract.addItem, addItem)
        router.unary(BasketContract.updateItemCount, updateItemCount)
        router.unary(BasketContract.removeItem, removeItem)
        router.unary(BasketContract.clearBasket, clearBasket)
        router.serverStreaming(BasketContract.watchBasket, watchBasket)
    }
}
