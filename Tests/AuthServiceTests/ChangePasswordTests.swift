import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `ChangePassword` (API.md §3; README "Sessions": the calling session stays, with fresh
/// tokens, and every other session is revoked).
@Suite("ChangePassword")
struct ChangePasswordTests {
    /// Changes the password of `session`'s user.
    private func change(
        _ session: Session, from current: String, to new: String, on service: AuthServiceUnderTest
    ) async throws -> Session {
        try await service.client.unary(
            AuthContract.changePassword, ChangePasswordRequest(currentPassword: current, newPassword: new),
            options: service.authorized(session))
    }

    @Test("a change answers a fresh session for the caller and the new password works")
    func changes() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let renewed = try await change(session, from: Passwords.initial, to: Passwords.replacement, on: service)
            #expect(renewed.tokenType == "Bearer")
            #expect(renewed.expiresIn == 900)
            #expect(renewed.user.id == session.user.id)
            #expect(renewed.refreshToken != session.refreshToken)
            #expect(try await service.currentUser(renewed).id == session.user.id)
            _ = try await service.refresh(renewed.refreshToken)
            await expectRPCError(AuthReason.invalidCredentials) { try await service.signIn("ada@example.com") }
            let next = try await service.signIn("ada@example.com", password: Passwords.replacement)
            #expect(next.user.id == session.user.id)
        }
    }

    @Test("a change revokes every other session of the user")
    func revokesOtherSessions() async throws {
        try await withAuthService { service in
            let phone = try await service.verifiedSession("ada@example.com")
            let laptop = try await service.signIn("ada@example.com")
            let renewed = try await change(phone, from: Passwords.initial, to: Passwords.replacement, on: service)
            await expectRPCError(AuthReason.sessionRevoked) { try await service.currentUser(laptop) }
            await expectRPCError(AuthReason.invalidRefreshToken) { try await service.refresh(laptop.refreshToken) }
            #expect(try await service.currentUser(renewed).id == phone.user.id)
        }
    }

    @Test("a wrong current password is INVALID_CREDENTIALS and changes nothing")
    func wrongCurrentPassword() async throws {
        try await withAuthService { service in
            let phone = try await service.verifiedSession("ada@example.com")
            let laptop = try await service.signIn("ada@example.com")
            await expectRPCError(AuthReason.invalidCredentials) {
                try await change(phone, from: "not-the-password-9", to: Passwords.replacement, on: service)
            }
            _ = try await service.signIn("ada@example.com")
            #expect(try await service.currentUser(laptop).id == phone.user.id)
        }
    }

    @Test(
        "a weak new password is WEAK_PASSWORD naming newPassword, its message in the user's words",
        arguments: [
            ("short", "The new password must be at least 8 characters long."),
            ("qwertyuiop", "The new password is too common; choose a less predictable one."),
            ("ada@example.com", "The new password must not be your email address."),
            (String(repeating: "z", count: 257), "The new password must be at most 256 characters long."),
        ])
    func weakPassword(password: String, message: String) async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let error = await expectRPCError(AuthReason.weakPassword) {
                try await change(session, from: Passwords.initial, to: password, on: service)
            }
            #expect(error?.violatedFields == ["newPassword"])
            #expect(error?.message == message)
            _ = try await service.signIn("ada@example.com")
        }
    }

    @Test("the current password as the new one is INVALID_ARGUMENT SAME_PASSWORD and changes nothing")
    func samePassword() async throws {
        try await withAuthService { service in
            let phone = try await service.verifiedSession("ada@example.com")
            let laptop = try await service.signIn("ada@example.com")
            let error = await expectRPCError(AuthReason.samePassword) {
                try await change(phone, from: Passwords.initial, to: Passwords.initial, on: service)
            }
            #expect(error?.message == "The new password is the same as the current one.")
            #expect(error?.violatedFields == ["newPassword"])
            // No session was revoked and the password still works.
            #expect(try await service.currentUser(laptop).id == phone.user.id)
            _ = try await service.signIn("ada@example.com")
        }
    }

    @Test("with a wrong current password, a new password equal to it is INVALID_CREDENTIALS, not SAME_PASSWORD")
    func samePasswordNeedsTheCurrentOne() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            await expectRPCError(AuthReason.invalidCredentials) {
                try await change(session, from: "not-the-password-9", to: "not-the-password-9", on: service)
            }
        }
    }

    @Test("a current password over the size limit is refused in the user's words, naming currentPassword")
    func oversizedCurrentPassword() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let error = await expectRPCError(AuthReason.weakPassword) {
                try await change(session, from: String(repeating: "y", count: 5_000), to: Passwords.replacement, on: service)
            }
            #expect(error?.violatedFields == ["currentPassword"])
            #expect(error?.message == "The current password must be at most 256 characters.")
        }
    }
}
