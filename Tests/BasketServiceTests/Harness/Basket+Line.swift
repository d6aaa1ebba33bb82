import Contracts

extension Basket {
    /// The line of `productId`, if the basket has one.
    func line(of productId: Int) -> BasketItem? { items.first { $0.productId == productId } }
}
