import InProcessServices
import RPCHTTP2
import ServiceTestSupport
import Testing
import RPC

/// The stack basket-svc's tests run against: auth-, catalog- (with its seed catalog of 24
/// products) and basket-svc.
typealias BasketStack = ServiceStack

/// Runs `body` against a fresh auth-, catalog- and basket-svc built in this process
/// (``withInProcessStack(_:options:_:)``).
@discardableResult
func withBasketStack<Result>(_ body: (BasketStack) async throws -> Result) async throws -> Result {
    try await withInProcessStack([.auth, .catalog, .basket], body)
}

/// Runs `body` against a fresh auth-, catalog- and basket-svc as processes
/// (``withServiceStack``): for what only a process or the wire shows (an outage by a killed
/// process, a shutdown, HTTP/2 flow control, log lines).
@discardableResult
func withLiveBasketStack<Result>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (BasketStack) async throws -> Result
) async throws -> Result {
    try await withServiceStack([.auth, .catalog, .basket], sourceLocation: sourceLocation, body)
}

extension BasketStack {
    /// A client of auth-svc.
    var authClient: RPCClient { get throws { try client(.auth) } }
    /// A client of catalog-svc.
    var catalogClient: RPCClient { get throws { try client(.catalog) } }
    /// A client of basket-svc, the service under test.
    var basketClient: RPCClient { get throws { try client(.basket) } }
    /// catalog-svc's process.
    var catalog: ServiceProcess { get throws { try service(.catalog) } }
    /// basket-svc's process.
    var basket: ServiceProcess { get throws { try service(.basket) } }
}
