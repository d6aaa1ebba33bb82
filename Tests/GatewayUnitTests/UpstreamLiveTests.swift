import Contracts
import Foundation
@testable import gateway
import Logging
import RPC
import RPCHTTP2
import Synchronization
import Testing

/// ``Upstream``: retries of idempotent calls and the circuit breaker, against in-process
/// servers over loopback.
@Suite("Upstream: retries and the circuit breaker", .serialized)
struct UpstreamLiveTests {
    static let logger = Logger(label: "gateway-unit-tests") { _ in SwiftLogNoOpLogHandler() }

    /// A server answering ListCategories (idempotent) and ClearBasket (not) with UNAVAILABLE
    /// `failures` times each, then with an empty answer; counts the calls it got.
    static func flakyServer(failures: Int, calls: CallCounter) throws -> HTTP2Server {
        var router = Router()
        router.unary(CatalogContract.listCategories) { _, _ in
            guard calls.count.add(1, ordering: .relaxed).newValue > failures else {
                throw RPCError(code: .unavailable, message: "warming up")
            }
            return ListCategoriesResponse(categories: [])
        }
        router.unary(BasketContract.clearBasket) { _, _ in
            calls.count.add(1, ordering: .relaxed)
            throw RPCError(code: .unavailable, message: "warming up")
        }
        return try HTTP2Server(configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: router, logger: logger)
    }

    static func upstream(port: Int) throws -> Upstream {
        Upstream(
            name: "catalog-svc", services: [CatalogContract.service], required: true,
            client: try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port)))
    }

    static func listCategories(_ upstream: Upstream) async throws -> ListCategoriesResponse {
        try await upstream.forward(CatalogContract.listCategories.info, options: CallOptions(timeout: .seconds(10))) { call in
            try await StorefrontService.unary(CatalogContract.listCategories, Empty(), on: call)
        }
    }

    @Test("an idempotent call answered UNAVAILABLE is retried until it succeeds")
    func retriesIdempotent() async throws {
        let calls = CallCounter()
        let server = try Self.flakyServer(failures: 2, calls: calls)
        let upstream = try Self.upstream(port: try server.start())
        let response = try await Self.listCategories(upstream)
        #expect(response.categories.isEmpty)
        #expect(calls.count.load(ordering: .relaxed) == 3)
        #expect(!upstream.breaker.isOpen)
        await upstream.client.close()
        await server.shutdown()
    }

    @Test("a call that is not idempotent is not retried, and the upstream's own error comes back as it is")
    func noRetryOfOthers() async throws {
        let calls = CallCounter()
        let server = try Self.flakyServer(failures: 0, calls: calls)
        let upstream = try Self.upstream(port: try server.start())
        for _ in 0..<4 {
            await expectGatewayError(.unavailable, reason: nil) {
                _ = try await upstream.forward(BasketContract.clearBasket.info, options: CallOptions(timeout: .seconds(5))) {
                    try await StorefrontService.unary(BasketContract.clearBasket, ClearBasketRequest(), on: $0)
                }
            }
        }
        #expect(calls.count.load(ordering: .relaxed) == 4)
        // It answered every time, so it is up: the breaker stays closed.
        #expect(!upstream.breaker.isOpen)
        await upstream.client.close()
        await server.shutdown()
    }

    @Test("an upstream nobody listens on opens the breaker, which then answers UPSTREAM_UNAVAILABLE at once")
    func opensOnTransportFailures() async throws {
        let calls = CallCounter()
        let server = try Self.flakyServer(failures: 0, calls: calls)
        let port = try server.start()
        await server.shutdown()  // the port is free again: connections are refused
        let upstream = try Self.upstream(port: port)
        var attempts = 0
        while !upstream.breaker.isOpen && attempts < 10 {
            await expectGatewayError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") { _ = try await Self.listCategories(upstream) }
            attempts += 1
        }
        #expect(upstream.breaker.isOpen)
        do {
            _ = try await Self.listCategories(upstream)
            Issue.record("the call went through an open breaker")
        } catch let error as RPCError {
            #expect(error.reason == "UPSTREAM_UNAVAILABLE")
            #expect(error.message.contains("catalog-svc"))
        }
        await upstream.client.close()
    }
}

/// Counts the calls a test server got; shared by its handlers.
final class CallCounter: Sendable {
    /// The count.
    let count = Atomic<Int>(0)
}
