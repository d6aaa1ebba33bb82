import Foundation
@testable import gateway
import Logging
import RPC
import RPCHTTP2
import Testing

/// A stream forwarded as the probe of a half-open breaker: the upstream's first answer closes
/// the breaker, so a watch that goes on for minutes does not hold every other call back.
@Suite("Gateway: a watch as the breaker's probe", .serialized)
struct ProxyBreakerTests {
    static let service = "test.watch.v1.WatchService"
    /// Writes one message, then nothing until the call is cancelled.
    static let watch = MethodInfo(
        service: service, method: "Watch", kind: .serverStreaming, auth: .none, idempotent: false, requestFields: [],
        responseFields: [])
    /// Answers its request as it came.
    static let ping = MethodInfo(
        service: service, method: "Ping", kind: .unary, auth: .none, idempotent: true, requestFields: [],
        responseFields: [])

    /// Sends `{}` on `call`, half-closes, and returns the first message back.
    static func firstMessage(on call: ClientCall) async throws -> Data? {
        try await call.send(Data("{}".utf8))
        call.finishSending()
        return try await call.nextMessage()
    }

    @Test("a watch admitted as the probe closes the breaker when the upstream answers, not when the watch ends")
    func watchProbeClosesBreaker() async throws {
        let logger = Logger(label: "proxy-breaker-tests") { _ in SwiftLogNoOpLogHandler() }
        var upstreamRouter = Router()
        upstreamRouter.register(Self.watch) { io, _ in
            _ = try await io.nextMessage()
            try await io.write(Data("{\"n\":1}".utf8))
            while true { try await Task.sleep(for: .milliseconds(10)) }
        }
        upstreamRouter.register(Self.ping) { io, _ in
            let request = try await io.nextMessage() ?? Data()
            try await io.write(request)
        }
        let upstreamServer = try HTTP2Server(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: upstreamRouter, logger: logger)
        let upstreamPort = try upstreamServer.start()

        // A breaker opened by a failure whose cool-down has passed: the next call is its probe.
        var state = CircuitBreakerState(threshold: 1, initialCoolDown: .milliseconds(1))
        state.recordFailure(now: .now - .seconds(1))
        let upstream = Upstream(
            name: "watch-svc", services: [Self.service], required: true,
            client: try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: upstreamPort)),
            breaker: CircuitBreaker(state))
        var router = Router()
        for method in [Self.watch, Self.ping] { router.proxy(method, to: upstream, policy: ForwardingPolicy()) }
        let gateway = try HTTP2Server(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: router, logger: logger)
        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: try gateway.start()))

        var failure: (any Error)?
        do {
            let watchCall = try client.makeCall(path: Self.watch.path, options: CallOptions(timeout: .seconds(30)))
            #expect(try await Self.firstMessage(on: watchCall) == Data("{\"n\":1}".utf8))
            // The watch goes on; a call beside it goes through instead of UPSTREAM_UNAVAILABLE.
            let pinged = try await client.withCall(path: Self.ping.path, options: CallOptions(timeout: .seconds(5))) {
                try await Self.firstMessage(on: $0)
            }
            #expect(pinged == Data("{}".utf8))
            #expect(!upstream.breaker.isOpen)
            watchCall.cancel()
        } catch {
            failure = error
        }
        await client.close()
        await upstream.client.close()
        await gateway.shutdown()
        await upstreamServer.shutdown()
        if let failure { throw failure }
    }
}
