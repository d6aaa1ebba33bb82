import Contracts
import Foundation
import InProcessServices
import RPC
import ServiceTestSupport
import Testing

/// Runs `body` against the four services with a gateway in front, all built in this process
/// (``withInProcessStack(_:options:_:)``): the gateway's router called through an
/// `InProcessTransport`, its upstreams reached the same way.
func withGateway(
    _ options: InProcessGatewayOptions = InProcessGatewayOptions(), _ body: (ServiceStack) async throws -> Void
) async throws {
    try await withInProcessStack(ServiceName.allCases, options: InProcessOptions(gateway: options), body)
}

/// Runs `body` against the four services with a gateway in front, each a process
/// (``withServiceStack``): for what only a process or the wire shows (HTTP/2 framing and
/// limits, the web edge, log lines, signals, addresses).
func withLiveGateway(
    gatewayArguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (ServiceStack) async throws -> Void
) async throws {
    try await withServiceStack(
        ServiceName.allCases, extraArguments: [.gateway: gatewayArguments], sourceLocation: sourceLocation, body)
}

extension ServiceStack {
    /// The client of the gateway.
    var gateway: RPCClient { get throws { try client(.gateway) } }

    /// A new client of the in-process gateway whose calls come from `peer` (another address
    /// than the stack's client), for the caller to close.
    func gatewayClient(from peer: String) throws -> RPCClient {
        RPCClient(transport: try inProcessService(.gateway).makeTransport(peer: peer))
    }

    /// Signs up a fresh account through the gateway, verifies it from the delivered email,
    /// signs in; the shopper calls the gateway.
    func newShopper(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Shopper {
        try await newShopper(signingUpThrough: .gateway, calling: .gateway, sourceLocation: sourceLocation)
    }

    /// Whether `name` logged a call line of `method` (its last path segment) with `requestID`.
    func logged(_ name: ServiceName, method: String, requestID: String) throws -> Bool {
        try service(name).log.lines.contains {
            $0.contains("method=/") && $0.contains("/\(method) ") && $0.contains("request-id=\(requestID)")
        }
    }

    /// The gateway's health status for `service` ("" for the whole gateway).
    func gatewayHealth(_ service: String = "") async throws -> ServingStatus {
        try await gateway.unary(
            HealthContract.check, HealthCheckRequest(service: service), options: CallOptions(timeout: .seconds(5))
        ).status
    }

    /// A new shopper with product 5 among their favorites and in their basket (one).
    func shopperWithProductFive() async throws -> Shopper {
        let gateway = try gateway
        let shopper = try await newShopper()
        _ = try await gateway.unary(CatalogContract.addFavorite, AddFavoriteRequest(productId: 5), options: shopper.options())
        _ = try await gateway.unary(BasketContract.addItem, AddItemRequest(productId: 5), options: shopper.options())
        return shopper
    }
}

/// Options with only a timeout.
func plain(_ metadata: Metadata = [:]) -> CallOptions { CallOptions(metadata: metadata, timeout: .seconds(15)) }

/// `token` with its signature changed: well formed, signed by nobody.
func forged(_ token: String) -> String {
    var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 3, let first = parts[2].first else { return token + "x" }
    parts[2] = (first == "A" ? "B" : "A") + parts[2].dropFirst()
    return parts.joined(separator: ".")
}

/// The next message of an open stream, decoded; fails the test when the stream ended.
func next<Message: Decodable>(_ type: Message.Type, from call: any ClientCall) async throws -> Message {
    let data = try #require(try await call.nextMessage(), "the stream ended early")
    return try JSONCodec.shared.decode(type, from: data)
}

/// Opens a `WatchBasket` of `shopper` through `client` and reads its first message (the stream
/// is then open up to basket-svc); a refusal is thrown.
func openBasketWatch(_ shopper: Shopper, through client: RPCClient, timeout: Duration = .seconds(120)) async throws -> any ClientCall {
    let call = try client.makeCall(
        path: BasketContract.watchBasket.path, options: CallOptions(metadata: shopper.metadata(), timeout: timeout))
    do {
        try await call.send(try JSONCodec.shared.encode(Empty()))
        call.finishSending()
        _ = try await next(Basket.self, from: call)
        return call
    } catch {
        call.cancel()
        throw error
    }
}
