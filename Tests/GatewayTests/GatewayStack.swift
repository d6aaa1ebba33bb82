import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// Runs `body` against the four services with a gateway in front (``withServiceStack``).
func withGateway(
    gatewayArguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (ServiceStack) async throws -> Void
) async throws {
    try await withServiceStack(
        ServiceName.allCases, extraArguments: [.gateway: gatewayArguments], sourceLocation: sourceLocation, body)
}

extension ServiceStack {
    /// The client of the gateway.
    var gateway: RPCClient { get throws { try client(.gateway) } }

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
}

/// Options with only a timeout.
func plain(_ metadata: Metadata = [:]) -> CallOptions { CallOptions(metadata: metadata, timeout: .seconds(15)) }

