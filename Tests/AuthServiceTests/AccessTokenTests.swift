import Contracts
import Credentials
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// How the authenticated methods treat the `authorization` header (API.md §3: `MISSING_TOKEN`,
/// `INVALID_ACCESS_TOKEN`, `ACCESS_TOKEN_EXPIRED`, `SESSION_REVOKED`).
@Suite("Access tokens on authenticated methods")
struct AccessTokenTests {
    @Test("an authenticated method without a token is MISSING_TOKEN", arguments: AuthenticatedMethod.all)
    func missingToken(method: AuthenticatedMethod) async throws {
        try await withAuthService { service in
            await expectRPCError(AuthReason.missingToken) {
                try await service.rawCall(method.path, json: Data(method.body.utf8))
            }
        }
    }

    @Test("a forged or foreign access token is INVALID_ACCESS_TOKEN", arguments: ForgedAccessToken.allCases)
    func invalidAccessToken(forgery: ForgedAccessToken) async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let token = try forgery.token(from: session, of: service)
            await expectRPCError(AuthReason.invalidAccessToken) {
                try await service.client.unary(AuthContract.getCurrentUser, Empty(), options: service.authorized(token: token))
            }
            #expect(try await service.currentUser(session).id == session.user.id, "the genuine token still works")
        }
    }

    @Test("every authenticated method refuses a garbage token with INVALID_ACCESS_TOKEN")
    func everyMethodChecksTheToken() async throws {
        try await withAuthService { service in
            for method in AuthenticatedMethod.all {
                await expectRPCError(AuthReason.invalidAccessToken) {
                    try await service.rawCall(
                        method.path, json: Data(method.body.utf8), metadata: ["authorization": "Bearer garbage"])
                }
            }
        }
    }

    @Test("a token signed with the service's key for a live session is accepted: the key file is in use")
    func resignedTokenIsAccepted() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let header = try #require(CompactToken.header(of: session.accessToken))
            #expect(header.kid == service.signingKey.kid)
            let token = try ForgedAccessToken.resigned(session, of: service) { $0.issuedAt = Date() - 30 }
            let user = try await service.client.unary(
                AuthContract.getCurrentUser, Empty(), options: service.authorized(token: token)
            ).user
            #expect(user.id == session.user.id)
        }
    }

    @Test("an expired access token with a valid signature is ACCESS_TOKEN_EXPIRED")
    func expired() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let token = try ForgedAccessToken.resigned(session, of: service) { claims in
                claims.issuedAt = Date() - 1200
                claims.expiresAt = Date() - 300
            }
            await expectRPCError(AuthReason.accessTokenExpired) {
                try await service.client.unary(AuthContract.getCurrentUser, Empty(), options: service.authorized(token: token))
            }
        }
    }

    @Test("every authenticated method answers SESSION_REVOKED for a signed-out session")
    func everyMethodChecksRevocation() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            try await service.signOut(session, scope: .local)
            for method in AuthenticatedMethod.all {
                await expectRPCError(AuthReason.sessionRevoked) {
                    try await service.rawCall(
                        method.path, json: Data(method.body.utf8), metadata: service.authorized(session).metadata)
                }
            }
            #expect(try await service.signIn("ada@example.com").user.id == session.user.id)
        }
    }
}

/// An authenticated method of AuthService with a well-formed request body, so that only the
/// credentials can be wrong.
struct AuthenticatedMethod: Sendable, CustomTestStringConvertible {
    /// The method's path.
    var path: String
    /// A valid JSON request.
    var body: String

    var testDescription: String { String(path.split(separator: "/").last ?? "") }

    /// Every method with auth `user` (API.md §3).
    static let all = [
        AuthenticatedMethod(path: AuthContract.getCurrentUser.path, body: "{}"),
        AuthenticatedMethod(path: AuthContract.signOut.path, body: #"{"scope":"global"}"#),
        AuthenticatedMethod(
            path: AuthContract.changePassword.path,
            body: #"{"currentPassword":"\#(Passwords.initial)","newPassword":"\#(Passwords.replacement)"}"#),
        AuthenticatedMethod(path: AuthContract.updateProfile.path, body: #"{"displayName":"Mallory"}"#),
        AuthenticatedMethod(path: AuthContract.deleteAccount.path, body: #"{"password":"\#(Passwords.initial)"}"#),
        AuthenticatedMethod(path: AuthContract.watchAuthState.path, body: "{}"),
    ]
}
