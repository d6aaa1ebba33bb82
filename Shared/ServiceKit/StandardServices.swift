internal import Contracts
public import RPC

extension Router {
    /// Adds what every process serves: `grpc.health.v1.Health` and `shop.meta.v1.MetaService`.
    /// Call it after registering the service's own methods, so `Describe` lists them all. The
    /// services the process serves itself — `servedHere`, by default every service registered
    /// so far — answer health checks by name with the process's status
    /// (``HealthMonitor/follow(_:)``); the gateway names its own, since the rest it routes.
    public mutating func addStandardServices(health: HealthMonitor, servedHere: [String]? = nil) {
        health.follow(servedHere ?? registeredMethods.map(\.service))
        HealthService(monitor: health).register(into: &self)
        let described = DescribeResponse(methods: registeredMethods + [MetaContract.describe.info])
        immediateUnary(MetaContract.describe) { _, _ in described }
    }
}
