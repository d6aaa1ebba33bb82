import Contracts
import RPC

extension OrderService {
    /// Registers every method of `OrderService` on `router`.
    func register(on router: inout Router) {
        router.unary(OrderContract.placeOrder, placeOrder)
        router.unary(OrderContract.getOrder, getOrder)
        router.unary(OrderContract.listOrders, listOrders)
        router.unary(OrderContract.cancelOrder, cancelOrder)
    }
}
