@testable import gateway
import Contracts
import RPC
import Testing
import JSON

/// `GatewayError` sends exactly the code, reason, message and details API.md and the clients
/// rely on.
@Suite("GatewayError: what each refusal sends")
struct GatewayErrorTests {
    @Test(
        "a refusal converts to its code, reason and message",
        arguments: [
            (GatewayError.missingAPIKey, RPCCode.unauthenticated, "MISSING_API_KEY", "This method needs an x-api-key."),
            (.tooManyWatches(limit: 3, method: "WatchBasket"), .resourceExhausted, "TOO_MANY_WATCHES",
             "You already have 3 open WatchBasket streams; close one before opening another."),
            (.upstreamUnavailable(upstream: "catalog-svc"), .unavailable, "UPSTREAM_UNAVAILABLE",
             "catalog-svc is unavailable right now; try again shortly."),
        ] as [(GatewayError, RPCCode, String, String)])
    func converts(error: GatewayError, code: RPCCode, reason: String, message: String) {
        let sent = RPCError(converting: error)
        #expect(sent.code == code)
        #expect(sent.reason == reason)
        #expect(sent.message == message)
        #expect(sent.details == nil)
    }

    @Test("the rate limits say how long to wait, in the message and the details, rounded up to seconds")
    func rateLimited() {
        let sent = GatewayError.rateLimited(retryAfter: .milliseconds(100)).rpcError
        #expect(sent.code == .resourceExhausted)
        #expect(sent.reason == "RATE_LIMITED")
        #expect(sent.message == "Too many requests; slow down; try again in 1 s.")
        #expect(sent.details == .object(["retryAfterSeconds": .number(1)]))
        let tokens = GatewayError.tooManyInvalidTokens(retryAfter: .seconds(3)).rpcError
        #expect(tokens.reason == "RATE_LIMITED")
        #expect(tokens.message == "Too many requests with access tokens that are not valid; sign in again; try again in 3 s.")
        #expect(tokens.details == .object(["retryAfterSeconds": .number(3)]))
    }

    @Test("a method no route serves is UNIMPLEMENTED without a reason")
    func notRouted() {
        let sent = GatewayError.notRouted(path: "/x.Y/Z").rpcError
        #expect(sent.code == .unimplemented)
        #expect(sent.reason == nil)
        #expect(sent.message == "/x.Y/Z is not routed here.")
    }
}
