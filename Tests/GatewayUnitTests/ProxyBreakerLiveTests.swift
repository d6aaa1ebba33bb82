import Foundation
@testable import gateway
import RPC
import RPCHTTP2
import Testing

/// A stream forwarded as the probe of a half-open breaker: the upstream's first answer closes
/// the breaker, so a watch that goes on for minutes does not hold every other call back.
@Suite("Gateway: a watch as the breaker's probe", .serialized)
struct ProxyBreakerLiveTests {
    static let service = "test.watch.v1.WatchService"
    /// Writes one message, then nothing until the call is cancelled.
    static let watch = ProxyFixture.method(service, "Watch", kind: .serverStreaming)
    /// Answers its request as it came.
    static let ping = ProxyFixture.method(service, "Ping", kind: .unary, idempotent: true)

    /// Sends `{}` on `call`, half-closes, and returns the first message back.
    static func firstMessage(on call: any ClientCall) async throws -> Data? {
        try await call.send(Data("{}".utf8))
        call.finishSending()
        return try await call.nextMessage()
    }

    @Test("a watch admitted as the probe closes the breaker when the upstream answers, not when the watch ends")
    func watchProbeClosesBreaker() async throws {
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
        // A breaker opened by a failure whose cool-down has passed: the next call is its probe.
        var state = CircuitBreakerState(threshold: 1, initialCoolDown: .milliseconds(1))
        state.recordFailure(now: .now - .seconds(1))
        try await ProxyFixture.withProxy(
            to: upstreamRouter, methods: [Self.watch, Self.ping], breaker: CircuitBreaker(state)
        ) { client, upstream in
            let watchCall = try client.makeCall(path: Self.watch.path, options: CallOptions(timeout: .seconds(30)))
            #expect(try await Self.firstMessage(on: watchCall) == Data("{\"n\":1}".utf8))
            // The watch goes on; a call beside it goes through instead of UPSTREAM_UNAVAILABLE.
            let pinged = try await client.withCall(path: Self.ping.path, options: CallOptions(timeout: .seconds(5))) {
                try await Self.firstMessage(on: $0)
            }
            #expect(pinged == Data("{}".utf8))
            #expect(!upstream.breaker.isOpen)
            watchCall.cancel()
        }
    }
}
