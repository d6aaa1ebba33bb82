import Contracts
import Credentials
import Foundation
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Testing

/// `GetJwks` (API.md §3) and the internal revocation feed
/// `shop.auth.v1.SessionRevocationService/ListRevokedSessions` (README "Revocation").
@Suite("GetJwks and the revocation feed")
struct KeysAndRevocationTests {
    @Test("GetJwks publishes public OKP or EC keys with a kid, including the signing key, and no private member")
    func publishesPublicKeys() async throws {
        try await withAuthService { service in
            let typed = try await service.client.unary(AuthContract.getJwks, Empty(), options: service.options())
            #expect(!typed.keys.isEmpty)
            for key in typed.keys {
                #expect(!key.kid.isEmpty)
                #expect(["OKP", "EC"].contains(key.kty), "\(key.kty)")
                #expect(key.x != nil)
            }
            #expect(typed.keys.map(\.kid).contains(service.signingKey.kid))

            // Decode the raw JSON too: a private member would be dropped by the typed decoder.
            let raw = try #require(try await service.rawCall(AuthContract.getJwks.path, json: Data("{}".utf8)).first)
            let object = try #require(try JSONSerialization.jsonObject(with: raw) as? [String: Any])
            let keys = try #require(object["keys"] as? [[String: Any]])
            for key in keys {
                for member in ["d", "p", "q", "dp", "dq", "qi", "k"] {
                    #expect(key[member] == nil, "a JWK carries the private member \(member)")
                }
            }
        }
    }

    @Test("a signed-out session appears in the revocation feed for the internal key")
    func listsRevokedSessions() async throws {
        try await withAuthService { service in
            let kept = try await service.verifiedSession("ada@example.com")
            let session = try await service.signIn("ada@example.com")
            let sessionID = try #require(CompactToken.accessClaims(of: session.accessToken)?.sessionID)
            let keptID = try #require(CompactToken.accessClaims(of: kept.accessToken)?.sessionID)
            try await service.signOut(session, scope: .local)

            let feed = try await service.client.unary(
                SessionRevocationContract.listRevokedSessions, ListRevokedSessionsRequest(afterSequence: 0),
                options: service.internalOptions())
            let revoked = feed.revocations.map(\.sessionId)
            #expect(revoked.contains(sessionID))
            #expect(!revoked.contains(keptID))
            #expect(feed.revocations.allSatisfy { isRFC3339($0.revokedAt) })
            #expect(feed.lastSequence > 0)

            let later = try await service.client.unary(
                SessionRevocationContract.listRevokedSessions, ListRevokedSessionsRequest(afterSequence: feed.lastSequence),
                options: service.internalOptions())
            #expect(later.revocations.isEmpty)
            #expect(later.lastSequence >= feed.lastSequence)
        }
    }

    @Test("the revocation feed refuses calls without the internal key, or with another key")
    func feedNeedsInternalKey() async throws {
        try await withAuthService { service in
            let request = ListRevokedSessionsRequest(afterSequence: 0)
            await expectRPCError(APIKeyReason.missingAPIKey) {
                try await service.client.unary(SessionRevocationContract.listRevokedSessions, request, options: service.options())
            }
            let wrong = CallOptions(metadata: [MetadataKey.apiKey: "not-the-key"], timeout: .seconds(15))
            await expectRPCError(APIKeyReason.invalidAPIKey) {
                try await service.client.unary(SessionRevocationContract.listRevokedSessions, request, options: wrong)
            }
            let session = try await service.verifiedSession("ada@example.com")
            await expectRPCError(APIKeyReason.missingAPIKey) {
                try await service.client.unary(
                    SessionRevocationContract.listRevokedSessions, request, options: service.authorized(session))
            }
        }
    }
}
