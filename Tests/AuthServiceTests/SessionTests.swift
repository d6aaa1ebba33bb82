import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `RefreshSession` and `SignOut` (API.md §3 "Refresh tokens"; README "Sessions").
@Suite("RefreshSession and SignOut")
struct SessionTests {
    @Test("a refresh rotates the refresh token and answers a working session for the same user")
    func rotates() async throws {
        try await withAuthService { service in
            let signedIn = try await service.verifiedSession("ada@example.com")
            let refreshed = try await service.refresh(signedIn.refreshToken)
            #expect(refreshed.refreshToken != signedIn.refreshToken)
            #expect(refreshed.tokenType == "Bearer")
            #expect(refreshed.expiresIn == 900)
            #expect(refreshed.user.id == signedIn.user.id)
            #expect(try await service.currentUser(refreshed).id == signedIn.user.id)
            let again = try await service.refresh(refreshed.refreshToken)
            #expect(again.refreshToken != refreshed.refreshToken)
        }
    }

    @Test("a rotated refresh token is REFRESH_TOKEN_REUSED, and then the whole family is revoked")
    func reuseRevokesFamily() async throws {
        try await withAuthService { service in
            let stolen = try await service.verifiedSession("ada@example.com")
            let victim = try await service.refresh(stolen.refreshToken)
            // The attacker replays the token the victim has already rotated.
            await expectRPCError(AuthReason.refreshTokenReused) {
                try await service.refresh(stolen.refreshToken)
            }
            // Now neither side can go on: the victim's current token is dead…
            await expectRPCError(AuthReason.invalidRefreshToken) {
                try await service.refresh(victim.refreshToken)
            }
            // …the attacker's gets nothing either…
            let replay = await expectRPCError(.unauthenticated, reason: nil) {
                try await service.refresh(stolen.refreshToken)
            }
            #expect(
                [AuthReason.refreshTokenReused.rawValue, AuthReason.invalidRefreshToken.rawValue]
                    .contains(replay?.reason ?? ""), "\(String(describing: replay))")
            // …and the family's access token no longer works.
            await expectRPCError(AuthReason.sessionRevoked) {
                try await service.currentUser(victim)
            }
        }
    }

    @Test("a reuse revokes only that family: another session of the user keeps working")
    func reuseSparesOtherSessions() async throws {
        try await withAuthService { service in
            let phone = try await service.verifiedSession("ada@example.com")
            let laptop = try await service.signIn("ada@example.com")
            _ = try await service.refresh(phone.refreshToken)
            await expectRPCError(AuthReason.refreshTokenReused) {
                try await service.refresh(phone.refreshToken)
            }
            #expect(try await service.currentUser(laptop).id == laptop.user.id)
            _ = try await service.refresh(laptop.refreshToken)
        }
    }

    @Test(
        "an unknown refresh token is INVALID_REFRESH_TOKEN",
        arguments: ["garbage", String(repeating: "A", count: 43), "a.b.c"])
    func invalidRefreshToken(token: String) async throws {
        try await withAuthService { service in
            await expectRPCError(AuthReason.invalidRefreshToken) {
                try await service.refresh(token)
            }
        }
    }

    @Test("an access token is not a refresh token")
    func accessTokenIsNotARefreshToken() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            await expectRPCError(AuthReason.invalidRefreshToken) {
                try await service.refresh(session.accessToken)
            }
        }
    }

    @Test("a local sign-out revokes only the calling session", arguments: [true, false])
    func localSignOut(scopeGiven: Bool) async throws {
        try await withAuthService { service in
            let phone = try await service.verifiedSession("ada@example.com")
            let laptop = try await service.signIn("ada@example.com")
            if scopeGiven {
                try await service.signOut(phone, scope: .local)
            } else {
                // A request without `scope` means local (README "Sessions").
                let answer = try await service.rawCall(
                    AuthContract.signOut.path, json: Data("{}".utf8), metadata: service.authorized(phone).metadata)
                #expect(answer.count == 1)
            }
            await expectRPCError(AuthReason.sessionRevoked) { try await service.currentUser(phone) }
            await expectRPCError(AuthReason.invalidRefreshToken) { try await service.refresh(phone.refreshToken) }
            #expect(try await service.currentUser(laptop).id == laptop.user.id)
            _ = try await service.refresh(laptop.refreshToken)
        }
    }

    @Test("a global sign-out revokes the sessions on every device")
    func globalSignOut() async throws {
        try await withAuthService { service in
            let phone = try await service.verifiedSession("ada@example.com")
            let laptop = try await service.signIn("ada@example.com")
            let tablet = try await service.refresh(try await service.signIn("ada@example.com").refreshToken)
            try await service.signOut(phone, scope: .global)
            for session in [phone, laptop, tablet] {
                await expectRPCError(AuthReason.sessionRevoked) { try await service.currentUser(session) }
                await expectRPCError(AuthReason.invalidRefreshToken) { try await service.refresh(session.refreshToken) }
            }
            // Signing in again starts a fresh session.
            let fresh = try await service.signIn("ada@example.com")
            #expect(try await service.currentUser(fresh).id == phone.user.id)
        }
    }

    @Test("a global sign-out by one user leaves other users signed in")
    func globalSignOutIsPerUser() async throws {
        try await withAuthService { service in
            let ada = try await service.verifiedSession("ada@example.com")
            let bob = try await service.verifiedSession("bob@example.com")
            try await service.signOut(ada, scope: .global)
            #expect(try await service.currentUser(bob).email == "bob@example.com")
        }
    }
}
