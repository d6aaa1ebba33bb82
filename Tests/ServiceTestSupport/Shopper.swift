package import Contracts
import Foundation
package import RPC
package import Testing

/// One signed-in session of a verified test user: who they are, the token their calls carry,
/// and the client those calls go to (the service under test, or the gateway). Each suite adds
/// the calls it makes as an extension. Immutable; `Sendable`.
package struct Shopper: Sendable {
    /// The account's email address.
    package let email: String
    /// The user id (the access token's subject).
    package let userID: String
    /// The session's access token.
    package let accessToken: String
    /// The client the shopper's calls go to.
    package let client: RPCClient

    /// A session of `email` made from `session`, calling through `client`.
    package init(email: String, session: Session, client: RPCClient) {
        self.email = email
        userID = session.user.id
        accessToken = session.accessToken
        self.client = client
    }

    /// Metadata with `authorization: Bearer <accessToken>`, plus `extra`.
    package func metadata(_ extra: Metadata = [:]) -> Metadata {
        var metadata: Metadata = [MetadataKey.authorization: "Bearer \(accessToken)"]
        for entry in extra { metadata.set(entry.name, entry.value) }
        return metadata
    }

    /// Call options with the authorization and `timeout`.
    package func options(timeout: Duration = .seconds(15)) -> CallOptions {
        CallOptions(metadata: metadata(), timeout: timeout)
    }
}

extension ServiceStack {
    /// The password of every account a stack's shoppers have (long, uncommon, not an email).
    package static let shopperPassword = "amber-orchard-violin-58"

    /// The accounts of this stack's auth-svc, made through `entry`'s client (auth-svc itself,
    /// or the gateway in front of it), all with ``shopperPassword``.
    package func accounts(through entry: ServiceName = .auth) throws -> TestAccounts {
        TestAccounts(client: try client(entry), authDataDirectory: dataDirectory(.auth), password: Self.shopperPassword)
    }

    /// Signs up `email` (a fresh one when nil) through `entry`, redeems its verification email
    /// and signs in; the shopper's calls go to `target`.
    package func newShopper(
        _ email: String? = nil, signingUpThrough entry: ServiceName = .auth, calling target: ServiceName,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Shopper {
        let email = email ?? "shopper-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let session = try await accounts(through: entry).signedInUser(email, sourceLocation: sourceLocation)
        return Shopper(email: email, session: session, client: try client(target))
    }

    /// A new session of the account `shopper` belongs to (another device of the same user),
    /// calling the same client.
    package func anotherSession(of shopper: Shopper) async throws -> Shopper {
        Shopper(email: shopper.email, session: try await accounts().signIn(shopper.email), client: shopper.client)
    }
}
