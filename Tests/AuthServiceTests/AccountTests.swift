import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `GetCurrentUser`, `UpdateProfile` and `DeleteAccount` (API.md §3; README: display names
/// are trimmed, at most 100 characters, no control characters, and an empty one clears it).
@Suite("GetCurrentUser, UpdateProfile and DeleteAccount")
struct AccountTests {
    /// Sets the display name of `session`'s user.
    private func update(_ session: Session, name: String, on service: AuthServiceUnderTest) async throws -> User {
        try await service.client.unary(
            AuthContract.updateProfile, UpdateProfileRequest(displayName: name), options: service.authorized(session)
        ).user
    }

    /// Deletes `session`'s account.
    private func delete(_ session: Session, password: String?, on service: AuthServiceUnderTest) async throws -> Empty {
        try await service.client.unary(
            AuthContract.deleteAccount, DeleteAccountRequest(password: password), options: service.authorized(session))
    }

    @Test("GetCurrentUser answers the token's user")
    func currentUser() async throws {
        try await withAuthService { service in
            let ada = try await service.verifiedSession("ada@example.com")
            let bob = try await service.verifiedSession("bob@example.com")
            #expect(try await service.currentUser(ada) == ada.user)
            #expect(try await service.currentUser(bob) == bob.user)
        }
    }

    @Test(
        "UpdateProfile sets a trimmed display name, and GetCurrentUser shows it",
        arguments: [
            ("Ada Lovelace", "Ada Lovelace"), ("  Ada  ", "Ada"), ("Zoë Ødegård 🚀", "Zoë Ødegård 🚀"),
            ("李小龍", "李小龍"), (String(repeating: "n", count: 100), String(repeating: "n", count: 100)),
        ])
    func updatesName(given: String, stored: String) async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let user = try await update(session, name: given, on: service)
            #expect(user.displayName == stored)
            #expect(try await service.currentUser(session).displayName == stored)
        }
    }

    @Test("an empty display name clears it")
    func clearsName() async throws {
        try await withAuthService { service in
            try await service.signUpAndVerify("ada@example.com", displayName: "Ada")
            let session = try await service.signIn("ada@example.com")
            #expect(session.user.displayName == "Ada")
            let user = try await update(session, name: "", on: service)
            #expect(user.displayName == nil)
        }
    }

    @Test(
        "a display name too long or with control characters is INVALID_ARGUMENT naming the field",
        arguments: [String(repeating: "x", count: 1000), String(repeating: "n", count: 101), "Ada\u{0}", "Ada\nLovelace", "Ada\u{1B}[31m", "\u{7F}"])
    func invalidName(name: String) async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let error = await expectRPCError(.invalidArgument, reason: nil) {
                try await update(session, name: name, on: service)
            }
            #expect(error?.violatedFields == ["displayName"])
            #expect(try await service.currentUser(session).displayName == nil)
        }
    }

    @Test("a password user must give the right password to delete the account")
    func deleteNeedsPassword() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            await expectRPCError(AuthReason.requiresRecentLogin) { try await delete(session, password: nil, on: service) }
            await expectRPCError(AuthReason.invalidCredentials) {
                try await delete(session, password: "not-the-password-9", on: service)
            }
            #expect(try await service.currentUser(session).id == session.user.id)
        }
    }

    @Test("a deleted account cannot sign in, its tokens are refused, and its address is free again")
    func deletes() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let other = try await service.signIn("ada@example.com")
            #expect(try await delete(session, password: Passwords.initial, on: service) == Empty())
            await expectRPCError(AuthReason.invalidCredentials) { try await service.signIn("ada@example.com") }
            for revoked in [session, other] {
                await expectRPCError(AuthReason.sessionRevoked) { try await service.currentUser(revoked) }
                await expectRPCError(AuthReason.invalidRefreshToken) { try await service.refresh(revoked.refreshToken) }
            }
            let again = try await service.signUp("ada@example.com")
            #expect(again.id != session.user.id)
        }
    }

    @Test("an ID-token user deletes the account without a password right after signing in")
    func idTokenUserDeletes() async throws {
        try await withAuthService { service in
            let session = try await service.signIn(with: .google, idToken: try IDTokens.google())
            #expect(try await delete(session, password: nil, on: service) == Empty())
            await expectRPCError(AuthReason.sessionRevoked) { try await service.currentUser(session) }
            let fresh = try await service.signIn(with: .google, idToken: try IDTokens.google())
            #expect(fresh.user.id != session.user.id, "the same Google subject makes a new account")
        }
    }
}
