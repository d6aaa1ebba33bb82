package import Contracts
package import Credentials
internal import Foundation
package import RPC
package import RPCHTTP2

/// The stand-in for auth-svc's keys in contract tests: one fixed Ed25519 key (so the `GetJwks`
/// example in the contracts never changes), the access tokens it signs, and a small server
/// publishing it for providers that verify tokens.
package enum TestAuthority {
    /// The `iss` the services expect by default.
    package static let issuer = "storefront-auth"
    /// The `aud` the services expect by default.
    package static let audience = "storefront"
    /// The key's id.
    package static let keyID = "contract-test-key"
    /// The internal API key consumer tests give their services, so that recorded contracts
    /// show a recognisable placeholder rather than a secret.
    package static let internalKey = "contract-test-internal-key"

    /// The fixed signing key: the Ed25519 seed 0x01…0x20.
    package static func signingKey() throws -> SigningKey {
        try SigningKey(algorithm: .edDSA, privateKey: Data((1...32).map { UInt8($0) }), kid: keyID)
    }

    /// The key as `GetJwks` publishes it.
    package static func publishedKey() throws -> Contracts.JWK {
        let key = try signingKey()
        let jwk = key.publicJWK
        return Contracts.JWK(
            kty: jwk.kty, kid: jwk.kid ?? key.kid, use: jwk.use, alg: jwk.alg, crv: jwk.crv, x: jwk.x, y: jwk.y)
    }

    /// An access token for `userID` in session `sessionID`, valid for 15 minutes.
    package static func accessToken(
        userID: String, sessionID: String = "contract-session-1", email: String = "shopper@example.com"
    ) throws -> String {
        let claims = AccessTokenClaims(
            issuer: issuer, subject: userID, audience: audience, sessionID: sessionID, email: email, emailVerified: true)
        return try JWTSigner(key: try signingKey()).sign(claims)
    }

    /// `authorization` metadata carrying an access token for `userID`.
    package static func authorization(userID: String) throws -> Metadata {
        [MetadataKey.authorization: "Bearer \(try accessToken(userID: userID))"]
    }

    /// Starts a server that publishes the key (`GetJwks`) and an empty revocation feed, on a
    /// free loopback port; the caller shuts it down.
    package static func startServer() throws -> (server: HTTP2Server, address: SocketAddressText) {
        let keys = GetJwksResponse(keys: [try publishedKey()])
        var router = Router()
        router.unary(AuthContract.getJwks) { _, _ in keys }
        router.unary(SessionRevocationContract.listRevokedSessions) { request, _ in
            ListRevokedSessionsResponse(revocations: [], lastSequence: request.afterSequence)
        }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.loopCount = 1
        configuration.gracePeriod = .seconds(1)
        let server = try HTTP2Server(configuration: configuration, router: router, logger: ContractLogging.quiet)
        let port = try server.start()
        return (server, SocketAddressText(host: "127.0.0.1", port: port))
    }
}
