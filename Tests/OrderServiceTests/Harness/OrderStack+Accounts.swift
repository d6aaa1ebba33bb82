import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// A signed-in, verified user of a stack: who they are and the token their calls carry.
struct Shopper: Sendable {
    /// The account's email address.
    let email: String
    /// The user id (the access token's subject, and `orders.user_id`).
    let userID: String
    /// The access token of the session.
    let accessToken: String

    /// Metadata with `authorization: Bearer <accessToken>`.
    var authorization: Metadata { [MetadataKey.authorization: "Bearer \(accessToken)"] }

    /// Call options with the authorization and `timeout`.
    func options(timeout: Duration = .seconds(15)) -> CallOptions {
        CallOptions(metadata: authorization, timeout: timeout)
    }
}

/// Accounts: sign up, verify from the delivered email, sign in.
extension OrderStack {
    /// The password every shopper is created with (long, uncommon, not an email).
    static let password = "amber-orchard-violin-58"

    /// The accounts of this stack's auth-svc, all with ``password``.
    func accounts() throws -> TestAccounts {
        TestAccounts(client: try client(.auth), authDataDirectory: dataDirectory(.auth), password: Self.password)
    }

    /// Signs up a fresh account, redeems its verification email and signs in.
    func newShopper(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Shopper {
        let email = "shopper-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let session = try await accounts().signedInUser(email, sourceLocation: sourceLocation)
        return Shopper(email: email, userID: session.user.id, accessToken: session.accessToken)
    }
}
