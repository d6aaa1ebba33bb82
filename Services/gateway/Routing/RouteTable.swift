import Contracts
import RPC

/// Which service answers which method at the gateway (API.md §7): every public method of
/// auth-svc, catalog-svc, basket-svc and order-svc, by the contracts both sides compile
/// against. Internal methods (stock reservations, the revocation feed) are left out, so the
/// gateway answers them `UNIMPLEMENTED` like any unknown path.
enum RouteTable {
    /// The methods a client may call through the gateway on the service of `contract`.
    static func publicMethods(of methods: [MethodInfo]) -> [MethodInfo] {
        methods.filter { $0.auth != .internal }
    }

    /// The methods of an upstream's contract, the upstream, and the policy its calls are forwarded under.
    typealias Route = (methods: [MethodInfo], upstream: Upstream, policy: ForwardingPolicy)

    /// Registers a proxy for every public method of each upstream's contract, forwarding under
    /// that upstream's policy, its watches held to `watches`' cap.
    static func register(on router: inout Router, routes: [Route], watches: WatchLimiter) {
        for (methods, upstream, policy) in routes {
            for method in publicMethods(of: methods) {
                router.proxy(method, to: upstream, policy: policy, watches: watches)
            }
        }
    }
}
