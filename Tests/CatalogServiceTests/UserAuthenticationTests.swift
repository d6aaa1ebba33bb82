import Contracts
import Credentials
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// The favorites methods need a signed-in user (API.md §3's note): each answers
/// UNAUTHENTICATED with `MISSING_TOKEN`, `INVALID_ACCESS_TOKEN`, `ACCESS_TOKEN_EXPIRED` or
/// `SESSION_REVOKED`, and a session signed out everywhere stops working within 60 seconds.
@Suite("User authentication")
struct UserAuthenticationTests {
    /// What a call presents as `authorization`, and the reason it must be refused with.
    enum Credential: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case none = "no authorization"
        // "Bearer " with its trailing space is no valid HTTP/2 field value (RFC 9113 §8.2.1).
        case emptyBearer = "Bearer with no token"
        case basic = "Basic credentials"
        case garbage = "Bearer garbage"
        case tamperedPayload = "a genuine signature over a changed payload"
        case unknownKey = "a token signed by a key auth-svc never published"
        case wrongAudience = "a validly signed token for another audience"
        case wrongIssuer = "a validly signed token from another issuer"
        case expired = "a validly signed token that expired ten minutes ago"
        case notAccessType = "a validly signed token whose typ is not access"

        var testDescription: String { rawValue }

        /// The reason the call must be refused with.
        var reason: AuthReason {
            switch self {
            case .none, .emptyBearer, .basic: .missingToken
            case .garbage, .tamperedPayload, .unknownKey, .wrongAudience, .wrongIssuer, .notAccessType: .invalidAccessToken
            case .expired: .accessTokenExpired
            }
        }

        /// The metadata to send, made from a genuine `session` of `stack`.
        func metadata(from session: Session, of stack: CatalogStack) throws -> Metadata {
            let token: String
            switch self {
            case .none: return Metadata()
            case .emptyBearer: return [MetadataKey.authorization: "Bearer"]
            case .basic: return [MetadataKey.authorization: "Basic YWRhOnNlY3JldA=="]
            case .garbage: token = "garbage"
            case .tamperedPayload:
                let parts = session.accessToken.split(separator: ".")
                let forged = try stack.resignedToken(session) { $0.subject = "someone-else" }.split(separator: ".")
                token = [parts[0], forged[1], parts[2]].joined(separator: ".")
            case .unknownKey:
                let claims = try JSONDecoder().decode(
                    AccessTokenClaims.self, from: Base64URL.decode(session.accessToken.split(separator: ".")[1]) ?? Data())
                token = try JWTSigner(key: SigningKey.generate()).sign(claims)
            case .wrongAudience: token = try stack.resignedToken(session) { $0.audience = "someone-else" }
            case .wrongIssuer: token = try stack.resignedToken(session) { $0.issuer = "https://evil.example" }
            case .notAccessType: token = try stack.resignedToken(session) { $0.type = "refresh" }
            case .expired:
                token = try stack.resignedToken(session) {
                    $0.issuedAt = Date() - 1_500
                    $0.expiresAt = Date() - 600
                }
            }
            return [MetadataKey.authorization: "Bearer \(token)"]
        }
    }

    /// The favorites methods, each as a named call about `productId` carrying `metadata`.
    static func favoritesCalls(
        _ stack: CatalogStack, productId: Int, metadata: Metadata
    ) throws -> [(String, () async throws -> Void)] {
        let client = try stack.catalogClient
        let options = CallOptions(metadata: metadata, timeout: .seconds(15))
        return [
            ("AddFavorite", { _ = try await client.unary(CatalogContract.addFavorite, AddFavoriteRequest(productId: productId), options: options) }),
            ("RemoveFavorite", { _ = try await client.unary(CatalogContract.removeFavorite, RemoveFavoriteRequest(productId: productId), options: options) }),
            ("ListFavorites", { _ = try await client.unary(CatalogContract.listFavorites, PageRequest(), options: options) }),
        ]
    }

    @Test("every favorites method refuses a call without a valid access token", arguments: Credential.allCases)
    func refused(credential: Credential) async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            let productId = try #require(try await stack.allProducts().first?.id)
            let metadata = try credential.metadata(from: session, of: stack)
            for (name, call) in try Self.favoritesCalls(stack, productId: productId, metadata: metadata) {
                let error = await expectRPCError(credential.reason) { try await call() }
                #expect(error != nil, "\(name)")
            }
            // The genuine token works, and nothing was added by the refused calls.
            #expect(try await stack.favoriteIDs(of: session).isEmpty)
        }
    }

    @Test("a token re-signed by auth-svc's key with unchanged claims is accepted")
    func resignedTokenAccepted() async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            let token = try stack.resignedToken(session) { _ in }
            _ = try await stack.catalogClient.unary(CatalogContract.listFavorites, PageRequest(), options: stack.bearer(token))
        }
    }

    @Test("after SignOut with scope global, the user's sessions get SESSION_REVOKED within 60 s; others keep working")
    func revokedSession() async throws {
        try await withCatalogService { stack in
            let first = try await stack.signedInUser("ada@example.com")
            let second = try await stack.signIn("ada@example.com")
            let bystander = try await stack.signedInUser("bob@example.com")
            let productId = try #require(try await stack.allProducts().first?.id)
            try await stack.addFavorite(productId, as: first)
            #expect(try await stack.favoriteIDs(of: second) == [productId])

            let signedOut = ContinuousClock.now
            try await stack.signOut(first, scope: .global)
            var refusal: RPCError?
            while refusal == nil, ContinuousClock.now - signedOut < .seconds(45) {
                do {
                    _ = try await stack.favorites(of: second)
                    try await Task.sleep(for: .milliseconds(500))
                } catch let error as RPCError {
                    refusal = error
                }
            }
            let waited = ContinuousClock.now - signedOut
            let error = try #require(refusal, "the revoked session still worked after \(waited)")
            #expect(error.code == .unauthenticated && error.reason == AuthReason.sessionRevoked.rawValue, "\(error)")
            #expect(waited < .seconds(60))
            await expectRPCError(AuthReason.sessionRevoked) { try await stack.favorites(of: first) }
            await expectRPCError(AuthReason.sessionRevoked) { try await stack.addFavorite(productId, as: first) }

            #expect(try await stack.favoriteIDs(of: bystander).isEmpty)
            let fresh = try await stack.signIn("ada@example.com")
            #expect(try await stack.favoriteIDs(of: fresh) == [productId])
        }
    }
}
