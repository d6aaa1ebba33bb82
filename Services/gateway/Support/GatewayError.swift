import Contracts
import RPC
import ServiceKit

/// Why the gateway itself refuses a call rather than forwarding it, each case knowing the gRPC
/// code, reason and message it is sent with (API.md §5, README "Choices"). The web edges'
/// protocol errors (Connect, gRPC-Web) stay with the code that speaks each protocol.
///
/// Interceptors, the watch limiter and upstreams throw `rpcError`: their callers and tests
/// read an ``RPC/RPCError``.
enum GatewayError: Error, Sendable, Hashable, RPCErrorConvertible {
    /// An admin method called without an `x-api-key`.
    case missingAPIKey
    /// A client over the gateway's request rate, who may try again after the wait.
    case rateLimited(retryAfter: Duration)
    /// A client sending too many access tokens that are not valid, who may try again after the wait.
    case tooManyInvalidTokens(retryAfter: Duration)
    /// A client already holding `limit` open streams of `method` (its name).
    case tooManyWatches(limit: Int, method: String)
    /// The upstream `upstream` (its name) cannot be reached, or its breaker is open.
    case upstreamUnavailable(upstream: String)
    /// No route serves the method `path`.
    case notRouted(path: String)

    /// The error as the client sees it.
    var rpcError: RPCError {
        switch self {
        case .missingAPIKey:
            APIKeyReason.missingAPIKey.error("This method needs an x-api-key.")
        case .rateLimited(let wait):
            GatewayReason.rateLimited.error("Too many requests; slow down", retryAfter: wait)
        case .tooManyInvalidTokens(let wait):
            GatewayReason.rateLimited.error(
                "Too many requests with access tokens that are not valid; sign in again", retryAfter: wait)
        case .tooManyWatches(let limit, let method):
            GatewayReason.tooManyWatches.error(
                "You already have \(limit) open \(method) streams; close one before opening another.")
        case .upstreamUnavailable(let upstream):
            GatewayReason.upstreamUnavailable.error("\(upstream) is unavailable right now; try again shortly.")
        case .notRouted(let path):
            RPCError(code: .unimplemented, message: "\(path) is not routed here.")
        }
    }
}
