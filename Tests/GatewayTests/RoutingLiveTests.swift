import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing
import JSON

/// The gateway routes every public method, unchanged, and guards what it must.
@Suite("Gateway routing, keys, tokens and request ids")
struct RoutingLiveTests {
    @Test("public methods of every service answer through the gateway exactly as the service does")
    func routesUnchanged() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let direct = try await stack.client(.catalog).unary(CatalogContract.getProduct, GetProductRequest(id: 3), options: plain())
            let routed = try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 3), options: plain())
            #expect(routed == direct)
            let listing = try await gateway.unary(
                CatalogContract.listProducts, ListProductsRequest(query: "monitor", pageSize: 5), options: plain())
            #expect(!listing.products.isEmpty)
            let shopper = try await stack.newShopper()  // SignUp, VerifyEmail, SignIn through the gateway
            let user = try await gateway.unary(AuthContract.getCurrentUser, Empty(), options: shopper.options()).user
            #expect(user.email == shopper.email)
            let basket = try await gateway.unary(
                BasketContract.addItem, AddItemRequest(productId: 3, count: 2), options: shopper.options())
            #expect(basket.itemCount == 2)
            let orders = try await gateway.unary(OrderContract.listOrders, PageRequest(), options: shopper.options())
            #expect(orders.orders.isEmpty)
            // An error comes back with its code, reason and message as the service sent them.
            await expectRPCError(.notFound, reason: "PRODUCT_NOT_FOUND") {
                try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 999_999), options: plain())
            }
            await expectRPCError(.alreadyExists, reason: "ALREADY_IN_BASKET") {
                try await gateway.unary(BasketContract.addItem, AddItemRequest(productId: 3), options: shopper.options())
            }
        }
    }

    @Test("internal methods are never routed, even with the internal key")
    func internalMethodsUnimplemented() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let key: Metadata = [MetadataKey.apiKey: stack.internalKey]
            await expectRPCError(.unimplemented) {
                try await gateway.unary(
                    CatalogContract.reserveStock,
                    ReserveStockRequest(reservationId: "r1", items: [StockReservationItem(productId: 1, count: 1)]),
                    options: plain(key))
            }
            await expectRPCError(.unimplemented) {
                try await gateway.unary(CatalogContract.releaseStock, ReleaseStockRequest(reservationId: "r1"), options: plain(key))
            }
            await expectRPCError(.unimplemented) {
                try await gateway.unary(
                    SessionRevocationContract.listRevokedSessions, ListRevokedSessionsRequest(afterSequence: 0), options: plain(key))
            }
            // The stock was not touched.
            let product = try await stack.client(.catalog).unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            let routed = try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            #expect(product.product.stock == routed.product.stock)
        }
    }

    @Test("admin methods pass only with the right x-api-key, streams included")
    func adminKey() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            var product = try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 2), options: plain()).product
            product.title = "Renamed through the gateway"
            await expectRPCError(.unauthenticated, reason: "MISSING_API_KEY") {
                try await gateway.unary(CatalogContract.upsertProduct, UpsertProductRequest(product: product), options: plain())
            }
            await expectRPCError(.permissionDenied, reason: "INVALID_API_KEY") {
                try await gateway.unary(
                    CatalogContract.upsertProduct, UpsertProductRequest(product: product),
                    options: plain([MetadataKey.apiKey: "not-the-key"]))
            }
            let admin: Metadata = [MetadataKey.apiKey: stack.adminKey]
            let saved = try await gateway.unary(
                CatalogContract.upsertProduct, UpsertProductRequest(product: product), options: plain(admin))
            #expect(saved.product.title == "Renamed through the gateway")
            // ImportProducts, client-streaming, passes through message by message.
            let imported = try await gateway.clientStreaming(CatalogContract.importProducts, options: plain(admin)) { sender in
                for index in 0..<3 {
                    try await sender.send(ImportProductsRequest(product: Product(
                        title: "Imported \(index)", description: "Through the gateway", category: "electronics",
                        price: Money(amount: 1_000 + index, currency: "USD"), image: "https://example.com/\(index).jpg",
                        rating: Rating(rate: 4, count: 1), stock: 5)))
                }
            }
            #expect(imported.created == 3 && imported.failed.isEmpty)
            await expectRPCError(.unauthenticated, reason: "MISSING_API_KEY") {
                try await gateway.clientStreaming(CatalogContract.importProducts, options: plain()) { _ in }
            }
        }
    }

    @Test("user methods need a valid token at the gateway; refused calls never reach the service")
    func tokensCheckedAtTheGateway() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let requestID = "no-token-\(UUID().uuidString.prefix(8))"
            await expectRPCError(.unauthenticated, reason: "MISSING_TOKEN") {
                try await gateway.unary(BasketContract.getBasket, Empty(), options: plain([MetadataKey.requestID: requestID]))
            }
            await expectRPCError(.unauthenticated, reason: "INVALID_ACCESS_TOKEN") {
                try await gateway.unary(
                    BasketContract.getBasket, Empty(),
                    options: plain([MetadataKey.authorization: "Bearer not.a.jwt", MetadataKey.requestID: requestID]))
            }
            #expect(try stack.logged(.gateway, method: "GetBasket", requestID: requestID))
            #expect(try !stack.logged(.basket, method: "GetBasket", requestID: requestID))
        }
    }

    @Test("the request id, the client's or one the gateway assigns, reaches the service's log line")
    func requestIDPropagated() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.newShopper()
            let given = "trace-me-\(UUID().uuidString.prefix(8))"
            _ = try await gateway.unary(
                BasketContract.getBasket, Empty(),
                options: CallOptions(metadata: shopper.metadata([MetadataKey.requestID: given]), timeout: .seconds(15)))
            // Both lines may trail the answer (the gateway logs a call once it has answered it).
            let serviceLogged = try await eventually(within: .seconds(5), every: .milliseconds(100)) {
                try stack.logged(.basket, method: "GetBasket", requestID: given)
            }
            #expect(serviceLogged)
            let gatewayLogged = try await eventually(within: .seconds(5), every: .milliseconds(100)) {
                try stack.logged(.gateway, method: "GetBasket", requestID: given)
            }
            #expect(gatewayLogged)

            // Without one, the gateway's id is the one the service logs.
            _ = try await gateway.unary(OrderContract.listOrders, PageRequest(), options: shopper.options())
            // The gateway logs a call once it has answered it: its line may trail the answer.
            let gatewayLine = { try stack.service(.gateway).log.lines.last { $0.contains("/ListOrders ") } }
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(100)) { try gatewayLine() != nil })
            let assigned = try #require(try gatewayLine()
                .flatMap { line in line.split(separator: " ").first { $0.hasPrefix("request-id=") } }
                .map { String($0.dropFirst("request-id=".count)) })
            #expect(assigned != "-")
            #expect(try await eventually(within: .seconds(5), every: .milliseconds(100)) { try stack.logged(.order, method: "ListOrders", requestID: assigned) })
        }
    }

    @Test("over the rate limit, a client gets RATE_LIMITED while health checks still answer")
    func rateLimited() async throws {
        try await withGateway(gatewayArguments: ["--rate-limit", "0.5", "--rate-burst", "3", "--host", "::"]) { stack in
            let gateway = try stack.gateway
            for _ in 0..<3 {
                _ = try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            }
            let refused = await expectRPCError(.resourceExhausted, reason: "RATE_LIMITED") {
                try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain())
            }
            // It says how long to wait: one token every 2 s, so 1 or 2 whole seconds.
            let wait = try #require(refused?.details?["retryAfterSeconds"]?.numberValue, "no retryAfterSeconds: \(String(describing: refused))")
            #expect([1, 2].contains(wait), "retryAfterSeconds \(wait)")
            #expect(refused?.message.hasSuffix("try again in \(Int(wait)) s.") == true, "\(String(describing: refused?.message))")
            // Health counts like any call (issue 25): the flooding address's probe is limited too,
            // while a probe from its own address — an orchestrator's — is served.
            await expectRPCError(.resourceExhausted, reason: "RATE_LIMITED") { _ = try await stack.gatewayHealth() }
            let probe = try RPCClient(target: SocketAddressText(host: "::1", port: try stack.service(.gateway).port))
            let status: ServingStatus?
            do {
                status = try await probe.unary(HealthContract.check, HealthCheckRequest(), options: plain()).status
            } catch {
                status = nil
                Issue.record("the probe from another address was refused: \(error)")
            }
            await probe.close()
            #expect(status == .serving)
        }
    }

    @Test("auth-svc counts each client behind the gateway by its own address, whatever x-forwarded-for it sends")
    func clientAddressReachesAuth() async throws {
        // Listening on both stacks, the gateway sees a client of 127.0.0.1 and one of ::1 as two
        // addresses; without the gateway naming them, auth-svc would see its one address for both.
        try await withGateway(gatewayArguments: ["--host", "::"]) { stack in
            let first = try stack.gateway
            let second = try RPCClient(target: SocketAddressText(host: "::1", port: try stack.service(.gateway).port))
            func signUp(_ client: RPCClient, metadata: Metadata = [:]) async throws -> UserResponse {
                let email = "addr-\(UUID().uuidString.prefix(8).lowercased())@example.com"
                return try await client.unary(
                    AuthContract.signUp, SignUpRequest(email: email, password: ServiceStack.shopperPassword),
                    options: CallOptions(metadata: metadata, timeout: .seconds(15)))
            }
            do {
                for _ in 0..<10 { _ = try await signUp(first) }  // auth-svc's burst per address
                await expectRPCError(.resourceExhausted, reason: "RATE_LIMITED") {
                    try await signUp(first, metadata: ["x-forwarded-for": "198.51.100.7", "x-api-key": "guess"])
                }
                _ = try await signUp(second)  // another address, another bucket
            } catch {
                await second.close()
                throw error
            }
            await second.close()
        }
    }

    @Test("a signed-out session is refused by the gateway itself, even on a screen that renders without a user")
    func revokedSessionRefusedHere() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.newShopper()
            let page = GetProductPageRequest(productId: 2)
            _ = try await gateway.unary(StorefrontContract.getProductPage, page, options: shopper.options())
            _ = try await gateway.unary(AuthContract.signOut, SignOutRequest(), options: shopper.options())
            // The gateway learns of it from auth-svc's revocation feed (every 15 s). Only its
            // own check can refuse GetProductPage: the screen's user parts fail silently.
            let signedOut = ContinuousClock.now
            var refusal: RPCError?
            while refusal == nil, ContinuousClock.now - signedOut < .seconds(45) {
                do {
                    _ = try await gateway.unary(StorefrontContract.getProductPage, page, options: shopper.options())
                    try await Task.sleep(for: .milliseconds(500))
                } catch let error as RPCError {
                    refusal = error
                }
            }
            let error = try #require(refusal, "the signed-out session still worked at the gateway")
            #expect(error.code == .unauthenticated && error.reason == AuthReason.sessionRevoked.rawValue, "\(error)")
            #expect(try await gateway.unary(StorefrontContract.getProductPage, page, options: plain()).product.id == 2)
        }
    }

    @Test("after 20 access tokens that do not verify, an address's bad tokens are refused RATE_LIMITED; valid tokens and calls without one go on")
    func invalidTokensThrottled() async throws {
        try await withGateway { stack in
            let gateway = try stack.gateway
            let shopper = try await stack.newShopper()
            // The shopper's token with its signature changed: well formed, but it does not verify.
            var parts = shopper.accessToken.split(separator: ".").map(String.init)
            var signature = Array(parts[2])
            signature[10] = signature[10] == "A" ? "B" : "A"
            parts[2] = String(signature)
            let forged = CallOptions(metadata: ["authorization": "Bearer \(parts.joined(separator: "."))"], timeout: .seconds(15))
            for _ in 0..<20 {
                await expectRPCError(.unauthenticated, reason: "INVALID_ACCESS_TOKEN") {
                    try await gateway.unary(BasketContract.getBasket, Empty(), options: forged)
                }
            }
            await expectRPCError(.resourceExhausted, reason: "RATE_LIMITED") {
                try await gateway.unary(BasketContract.getBasket, Empty(), options: forged)
            }
            // Only the bad tokens wait: a genuine one from that address is checked and served.
            #expect(try await gateway.unary(BasketContract.getBasket, Empty(), options: shopper.options()).itemCount == 0)
            #expect(try await gateway.unary(CatalogContract.getProduct, GetProductRequest(id: 1), options: plain()).product.id == 1)
        }
    }
}
