import Foundation
@testable import gateway
import Logging
import RPC
import RPCHTTP2
import ServiceKit

/// A gateway proxying some methods to an in-process upstream, wired as `GatewayServer` wires
/// one (the upstream's client on the gateway's loop, handlers kept there), for the tests of
/// what passes through a route: streams, backpressure, the breaker.
enum ProxyFixture {
    static let logger = Logger(label: "proxy-tests") { _ in SwiftLogNoOpLogHandler() }

    /// A method of a test service with no auth, fields or retries.
    static func method(_ service: String, _ name: String, kind: MethodKind, idempotent: Bool = false) -> MethodInfo {
        MethodInfo(
            service: service, method: name, kind: kind, auth: .none, idempotent: idempotent, requestFields: [],
            responseFields: [])
    }

    /// Runs `body` with a client of a gateway routing `methods` to a server of `upstreamRouter`
    /// (the upstream named `upstream-svc`, with `breaker`); shuts everything down after.
    static func withProxy(
        to upstreamRouter: Router, methods: [MethodInfo], breaker: CircuitBreaker = CircuitBreaker(),
        _ body: (RPCClient, Upstream) async throws -> Void
    ) async throws {
        let upstreamServer = try HTTP2Server(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: upstreamRouter, logger: logger)
        let upstreamPort = try upstreamServer.start()
        let group = try EventLoopGroup(count: 1, name: "proxy-gateway")
        let upstream = Upstream(
            name: "upstream-svc", services: Array(Set(methods.map(\.service))), required: true,
            client: RPCClient(
                target: SocketAddressText(host: "127.0.0.1", port: upstreamPort), configuration: .upstream, group: group),
            breaker: breaker)
        var router = Router()
        for method in methods { router.proxy(method, to: upstream, policy: ForwardingPolicy()) }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.handlersStayOnLoop = true
        let gateway = HTTP2Server(configuration: configuration, router: router, logger: logger, group: group, ownsGroup: true)
        var failure: (any Error)?
        do {
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: try gateway.start()))
            do {
                try await body(client, upstream)
            } catch {
                failure = error
            }
            await client.close()
        } catch {
            failure = error
        }
        await upstream.client.close()
        await gateway.shutdown()
        await upstreamServer.shutdown()
        if let failure { throw failure }
    }
}
