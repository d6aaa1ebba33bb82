internal import Contracts
public import RPC

extension Router {
    /// Adds what every process serves: `grpc.health.v1.Health` and `shop.meta.v1.MetaService`.
    /// Call it after registering the service's own methods, so `Describe` lists them all.
    public mutating func addStandardServices(health: HealthMonitor) {
        HealthService(monitor: health).register(into: &self)
        let described = DescribeResponse(methods: registeredMethods + [MetaContract.describe.info])
        immediateUnary(MetaContract.describe) { _, _ in described }
    }
}
