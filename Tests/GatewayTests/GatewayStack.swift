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

/// A signed-in, verified user, signed up and in through the gateway.
struct Shopper: Sendable {
    let email: String
    let accessToken: String

    /// Metadata with `authorization: Bearer <accessToken>`, plus `extra`.
    func metadata(_ extra: Metadata = [:]) -> Metadata {
        var metadata: Metadata = [MetadataKey.authorization: "Bearer \(accessToken)"]
        for entry in extra { metadata.set(entry.name, entry.value) }
        return metadata
    }

    /// Options with the authorization and a 15 s timeout.
    var options: CallOptions { CallOptions(metadata: metadata(), timeout: .seconds(15)) }
}

extension ServiceStack {
    /// The client of the gateway.
    var gateway: RPCClient { get throws { try client(.gateway) } }

    /// Signs up a fresh account through the gateway, verifies it from the delivered email, signs in.
    func newShopper(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Shopper {
        let email = "gw-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let accounts = TestAccounts(
            client: try gateway, authDataDirectory: dataDirectory(.auth), password: "amber-orchard-violin-58")
        let session = try await accounts.signedInUser(email, sourceLocation: sourceLocation)
        return Shopper(email: email, accessToken: session.accessToken)
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

