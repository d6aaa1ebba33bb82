public import ArgumentParser
internal import Foundation
public import RPC

/// `--catalog-addr` (env `SHOP_CATALOG_ADDR`): where catalog-svc is, for the processes that call it.
public struct CatalogLinkOptions: ParsableArguments, Sendable {
    @Option(help: "catalog-svc address host:port, or its replicas: several host:port, comma-separated, or a name that resolves to several addresses (env SHOP_CATALOG_ADDR).")
    public var catalogAddr: String = ProcessInfo.processInfo.environment["SHOP_CATALOG_ADDR"] ?? "127.0.0.1:7002"

    public init() {}

    public mutating func validate() throws {
        guard UpstreamTarget(catalogAddr) != nil else { throw ValidationError("--catalog-addr must be host:port, or several separated by commas.") }
    }

    /// The parsed address or addresses.
    public var catalogTarget: UpstreamTarget {
        UpstreamTarget(catalogAddr) ?? UpstreamTarget(host: "127.0.0.1", port: 7002)
    }
}

/// `--basket-addr` (env `SHOP_BASKET_ADDR`): where basket-svc is, for the processes that call it.
public struct BasketLinkOptions: ParsableArguments, Sendable {
    @Option(help: "basket-svc address host:port, or its replicas: several host:port, comma-separated, or a name that resolves to several addresses (env SHOP_BASKET_ADDR).")
    public var basketAddr: String = ProcessInfo.processInfo.environment["SHOP_BASKET_ADDR"] ?? "127.0.0.1:7003"

    public init() {}

    public mutating func validate() throws {
        guard UpstreamTarget(basketAddr) != nil else { throw ValidationError("--basket-addr must be host:port, or several separated by commas.") }
    }

    /// The parsed address or addresses.
    public var basketTarget: UpstreamTarget {
        UpstreamTarget(basketAddr) ?? UpstreamTarget(host: "127.0.0.1", port: 7003)
    }
}

/// `--order-addr` (env `SHOP_ORDER_ADDR`): where order-svc is, for the gateway.
public struct OrderLinkOptions: ParsableArguments, Sendable {
    @Option(help: "order-svc address host:port, or its replicas: several host:port, comma-separated, or a name that resolves to several addresses (env SHOP_ORDER_ADDR).")
    public var orderAddr: String = ProcessInfo.processInfo.environment["SHOP_ORDER_ADDR"] ?? "127.0.0.1:7004"

    public init() {}

    public mutating func validate() throws {
        guard UpstreamTarget(orderAddr) != nil else { throw ValidationError("--order-addr must be host:port, or several separated by commas.") }
    }

    /// The parsed address or addresses.
    public var orderTarget: UpstreamTarget {
        UpstreamTarget(orderAddr) ?? UpstreamTarget(host: "127.0.0.1", port: 7004)
    }
}
