import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// Sign-in throttling (API.md §3 "Sign-in throttling"; README: from the 6th failure of an
/// account answers are delayed by a second, from the 11th attempts are refused).
@Suite("SignIn throttling")
struct SignInThrottlingTests {
    /// Makes `count` failed attempts for `email`; returns how long each answer took.
    private func fail(
        _ count: Int, email: String, on service: AuthServiceUnderTest, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> [Duration] {
        var durations: [Duration] = []
        for _ in 0..<count {
            let started = ContinuousClock.now
            await expectRPCError(AuthReason.invalidCredentials, sourceLocation: sourceLocation) {
                try await service.signIn(email, password: "not-the-password-9", timeout: .seconds(30))
            }
            durations.append(ContinuousClock.now - started)
        }
        return durations
    }

    @Test(
        "the 6th to 10th failures are delayed, and from the 11th attempt the account is TOO_MANY_ATTEMPTS",
        arguments: [true, false])
    func locksAfterTenFailures(accountExists: Bool) async throws {
        try await withAuthService { service in
            if accountExists { try await service.signUpAndVerify("ada@example.com") }
            let durations = await fail(10, email: "ada@example.com", on: service)
            for (index, duration) in durations.enumerated().dropFirst(5) {
                #expect(duration >= .milliseconds(900), "failure \(index + 1) took \(duration)")
            }
            // Refused without checking the password: the right one does not help either.
            await expectRPCError(AuthReason.tooManyAttempts) {
                try await service.signIn("ada@example.com", timeout: .seconds(30))
            }
            await expectRPCError(AuthReason.tooManyAttempts) {
                try await service.signIn("ADA@example.com", password: "another-wrong-one", timeout: .seconds(30))
            }
        }
    }

    @Test("DeleteAccount's password check is throttled with sign-in's: a burst of wrong guesses locks the account")
    func deleteAccountThrottled() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let codes = await withTaskGroup(of: String.self) { group in
                for index in 0..<25 {
                    group.addTask {
                        do {
                            _ = try await service.client.unary(
                                AuthContract.deleteAccount, DeleteAccountRequest(password: "wrong-guess-\(index)"),
                                options: service.authorized(session, timeout: .seconds(30)))
                            return "deleted"
                        } catch {
                            return RPCError(converting: error).reason ?? "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            // Ten guesses are checked; the rest, and then the right password, are refused.
            #expect(codes.filter { $0 == AuthReason.invalidCredentials.rawValue }.count == 10, "\(codes)")
            #expect(codes.filter { $0 == AuthReason.tooManyAttempts.rawValue }.count == 15, "\(codes)")
            await expectRPCError(AuthReason.tooManyAttempts) {
                try await service.signIn("ada@example.com", timeout: .seconds(30))
            }
            #expect(try await service.currentUser(session).id == session.user.id)
        }
    }

    @Test("a locked account does not lock another account signing in from the same address")
    func lockIsPerAccount() async throws {
        try await withAuthService { service in
            try await service.signUpAndVerify("ada@example.com")
            try await service.signUpAndVerify("bob@example.com")
            _ = await fail(10, email: "ada@example.com", on: service)
            await expectRPCError(AuthReason.tooManyAttempts) {
                try await service.signIn("ada@example.com", timeout: .seconds(30))
            }
            let session = try await service.signIn("bob@example.com", timeout: .seconds(30))
            #expect(session.user.email == "bob@example.com")
        }
    }

    @Test("a successful sign-in clears the account's failure count")
    func successClearsCount() async throws {
        try await withAuthService { service in
            try await service.signUpAndVerify("ada@example.com")
            _ = await fail(5, email: "ada@example.com", on: service)
            _ = try await service.signIn("ada@example.com", timeout: .seconds(30))
            let durations = await fail(5, email: "ada@example.com", on: service)
            // Had the count not been cleared these would be failures 6–10, each delayed, and
            // the next attempt the 11th, refused.
            #expect(durations.allSatisfy { $0 < .milliseconds(900) }, "\(durations)")
            let session = try await service.signIn("ada@example.com", timeout: .seconds(30))
            #expect(session.user.email == "ada@example.com")
        }
    }

    @Test("right passwords sent at once all sign in: attempts still being checked never refuse them")
    func concurrentRightPasswordsSucceed() async throws {
        try await withAuthService { service in
            try await service.signUpAndVerify("ada@example.com")
            // More than the ten failures that lock an account, all in flight together.
            let outcomes = await withTaskGroup(of: String.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        do {
                            return try await service.signIn("ada@example.com", timeout: .seconds(30)).user.email
                        } catch {
                            return RPCError(converting: error).reason ?? "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes == Array(repeating: "ada@example.com", count: 16), "\(outcomes)")
        }
    }

    @Test("a completed password reset lifts the lock, as the TOO_MANY_ATTEMPTS message says")
    func resetLiftsTheLock() async throws {
        try await withAuthService { service in
            try await service.signUpAndVerify("ada@example.com")
            _ = await fail(10, email: "ada@example.com", on: service)
            let refusal = await expectRPCError(AuthReason.tooManyAttempts) {
                try await service.signIn("ada@example.com", timeout: .seconds(30))
            }
            #expect(refusal?.message.contains("a completed reset lifts the lock") == true, "\(String(describing: refusal))")
            _ = try await service.client.unary(
                AuthContract.requestPasswordReset, RequestPasswordResetRequest(email: "ada@example.com"),
                options: service.options())
            let token = try await service.latestToken(to: "ada@example.com", kind: .resetPassword)
            _ = try await service.client.unary(
                AuthContract.resetPassword, ResetPasswordRequest(token: token, newPassword: Passwords.replacement),
                options: service.options())
            let session = try await service.signIn("ada@example.com", password: Passwords.replacement, timeout: .seconds(30))
            #expect(session.user.email == "ada@example.com")
        }
    }
}
