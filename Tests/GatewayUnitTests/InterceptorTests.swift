import Contracts
@testable import gateway
import Logging
import RPC
import ServiceKit
import Testing

/// The gateway's own interceptors: rate limits and the admin key.
@Suite("Gateway interceptors")
struct InterceptorTests {
    func context(_ method: MethodInfo, metadata: Metadata = [:], peer: String = "10.0.0.7:4321") -> ServerContext {
        ServerContext(method: method, metadata: metadata, deadline: nil, requestID: "r", peer: peer, logger: Logger(label: "t"))
    }

    @Test("an anonymous client is limited by its address, whatever port it calls from")
    func anonymousByAddress() async throws {
        let limiter = RateLimitInterceptor(perSecond: 0.001, burst: 2)
        var first = context(CatalogContract.getProduct.info, peer: "10.0.0.7:1")
        var second = context(CatalogContract.listProducts.info, peer: "10.0.0.7:2")
        try await limiter.prepare(&first)
        try await limiter.prepare(&second)
        var third = context(CatalogContract.getProduct.info, peer: "10.0.0.7:3")
        await expectGatewayError(.resourceExhausted, reason: "RATE_LIMITED") { try await limiter.prepare(&third) }
        var other = context(CatalogContract.getProduct.info, peer: "10.0.0.8:3")
        try await limiter.prepare(&other)
    }

    @Test("a signed-in client is limited by user, across addresses")
    func signedInByUser() async throws {
        let limiter = RateLimitInterceptor(perSecond: 0.001, burst: 1)
        let user = AuthenticatedUser(id: "u1", sessionID: "s", email: "a@example.com", emailVerified: true)
        var first = context(BasketContract.getBasket.info, peer: "10.0.0.1:1")
        first.attributes[AuthenticatedUserKey.self] = user
        try await limiter.prepare(&first)
        var second = context(BasketContract.getBasket.info, peer: "10.0.0.2:1")
        second.attributes[AuthenticatedUserKey.self] = user
        await expectGatewayError(.resourceExhausted, reason: "RATE_LIMITED") { try await limiter.prepare(&second) }
        var anonymous = context(CatalogContract.getProduct.info, peer: "10.0.0.2:1")
        try await limiter.prepare(&anonymous)
    }

    @Test("health checks and Describe count toward the limit like any call; a rate of 0 turns limits off")
    func probesCount() async throws {
        let limiter = RateLimitInterceptor(perSecond: 0.001, burst: 2)
        var check = context(HealthContract.check.info)
        try await limiter.prepare(&check)
        var describe = context(MetaContract.describe.info)
        try await limiter.prepare(&describe)
        var again = context(HealthContract.check.info)
        await expectGatewayError(.resourceExhausted, reason: "RATE_LIMITED") { try await limiter.prepare(&again) }
        var describeAgain = context(MetaContract.describe.info)
        await expectGatewayError(.resourceExhausted, reason: "RATE_LIMITED") { try await limiter.prepare(&describeAgain) }
        // Another address has its own bucket: its probe passes.
        var probe = context(HealthContract.check.info, peer: "10.9.9.9:1")
        try await limiter.prepare(&probe)
        let off = RateLimitInterceptor(perSecond: 0, burst: 1)
        #expect(off.limiter == nil)
        for _ in 0..<5 {
            var call = context(CatalogContract.getProduct.info)
            try await off.prepare(&call)
        }
    }

    @Test("the rate limit applies to every method, probes included, and to nothing when off; the admin check to admin methods")
    func applicability() {
        let limiter = RateLimitInterceptor(perSecond: 10, burst: 1)
        #expect(limiter.applies(to: HealthContract.check.info))
        #expect(limiter.applies(to: MetaContract.describe.info))
        #expect(limiter.applies(to: CatalogContract.getProduct.info))
        #expect(!RateLimitInterceptor(perSecond: 0, burst: 1).applies(to: CatalogContract.getProduct.info))
        for adminKey in [nil, "right"] {
            let admin = AdminKeyInterceptor(adminKey: adminKey)
            #expect(admin.applies(to: CatalogContract.upsertProduct.info))
            #expect(!admin.applies(to: CatalogContract.getProduct.info))
            #expect(!admin.applies(to: HealthContract.check.info))
        }
    }

    @Test("without the admin key configured, admin calls need some x-api-key and others pass")
    func adminPresence() async throws {
        let interceptor = AdminKeyInterceptor(adminKey: nil)
        var missing = context(CatalogContract.upsertProduct.info)
        await expectGatewayError(.unauthenticated, reason: "MISSING_API_KEY") { try await interceptor.prepare(&missing) }
        var given = context(CatalogContract.upsertProduct.info, metadata: ["x-api-key": "anything"])
        try await interceptor.prepare(&given)
        var user = context(CatalogContract.getProduct.info)
        try await interceptor.prepare(&user)
    }

    @Test("with the admin key configured, a wrong key is refused here")
    func adminCheck() async throws {
        let interceptor = AdminKeyInterceptor(adminKey: "right")
        var wrong = context(CatalogContract.deleteProduct.info, metadata: ["x-api-key": "wrong"])
        await expectGatewayError(.permissionDenied, reason: "INVALID_API_KEY") { try await interceptor.prepare(&wrong) }
        var right = context(CatalogContract.deleteProduct.info, metadata: ["x-api-key": "right"])
        try await interceptor.prepare(&right)
    }

    @Test("the route table leaves every internal method out and keeps every public one")
    func routeTable() {
        for methods in [AuthContract.all, CatalogContract.all, BasketContract.all, OrderContract.all] {
            let routed = Set(RouteTable.publicMethods(of: methods).map(\.path))
            for method in methods {
                #expect(routed.contains(method.path) == (method.auth != .internal), "\(method.path)")
            }
        }
        #expect(!RouteTable.publicMethods(of: CatalogContract.all).contains { $0.method == "ReserveStock" })
    }
}

/// Runs `body` and records an issue unless it throws an ``RPCError`` with `code` and
/// `reason` (nil: no reason).
func expectGatewayError(
    _ code: RPCCode, reason: String?, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected \(code.name) \(reason ?? "-"), but it succeeded", sourceLocation: sourceLocation)
    } catch let error as RPCError {
        #expect(error.code == code && error.reason == reason, "got \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected RPCError, got \(error)", sourceLocation: sourceLocation)
    }
}
