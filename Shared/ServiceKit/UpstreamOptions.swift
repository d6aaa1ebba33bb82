public import ArgumentParser
internal import Foundation
public import RPC

/// `--catalog-addr` (env `SHOP_CATALOG_ADDR`): where catalog-svc is, for the processes that call it.
public struct CatalogLinkOptions: ParsableArguments, Sendable {
    @Option(help: "catalog-svc address host:port (env SHOP_CATALOG_ADDR).")
    public var catalogAddr: String = ProcessInfo.processInfo.environment["SHOP_CATALOG_ADDR"] ?? "127.0.0.1:7002"

    public init() {}

    public mutating func validate() throws {
        guard SocketAddressText(catalogAddr) != nil else { throw ValidationError("--catalog-addr must be host:port.") }
    }

    /// The parsed address.
    public var catalogAddress: SocketAddressText {
        SocketAddressText(catalogAddr) ?? SocketAddressText(host: "127.0.0.1", port: 7002)
    }
}

/// `--basket-addr` (env `SHOP_BASKET_ADDR`): where basket-svc is, for the processes that call it.
public struct BasketLinkOptions: ParsableArguments, Sendable {
    @Option(help: "basket-svc address host:port (env SHOP_BASKET_ADDR).")
    public var basketAddr: String = ProcessInfo.processInfo.environment["SHOP_BASKET_ADDR"] ?? "127.0.0.1:7003"

    public init() {}

    public mutating func validate() throws {
        guard SocketAddressText(basketAddr) != nil else { throw ValidationError("--basket-addr must be host:port.") }
    }

    /// The parsed address.
    public var basketAddress: SocketAddressText {
        SocketAddressText(basketAddr) ?? SocketAddressText(host: "127.0.0.1", port: 7003)
    }
}

/// `--order-addr` (env `SHOP_ORDER_ADDR`): where order-svc is, for the gateway.
public struct OrderLinkOptions: ParsableArguments, Sendable {
    @Option(help: "order-svc address host:port (env SHOP_ORDER_ADDR).")
    public var orderAddr: String = ProcessInfo.processInfo.environment["SHOP_ORDER_ADDR"] ?? "127.0.0.1:7004"

    public init() {}

    public mutating func validate() throws {
        guard SocketAddressText(orderAddr) != nil else { throw ValidationError("--order-addr must be host:port.") }
    }

    /// The parsed address.
    public var orderAddress: SocketAddressText {
        SocketAddressText(orderAddr) ?? SocketAddressText(host: "127.0.0.1", port: 7004)
    }
}
