import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// `WatchAuthState` (API.md §3): the current state first, then `SIGNED_OUT` and the end of the
/// stream when the watched session is revoked.
@Suite("WatchAuthState")
struct WatchAuthStateTests {
    /// Something that revokes the watched session, done from the watcher's or another session.
    enum Revocation: String, CaseIterable, Sendable, CustomStringConvertible {
        case globalSignOutElsewhere = "a global sign-out from another session"
        case passwordChangeElsewhere = "a password change from another session"
        case localSignOutOfThisSession = "a local sign-out of the watched session"
        case passwordReset = "a password reset"
        case accountDeletion = "the account's deletion from another session"

        var description: String { rawValue }

        /// Does it, for `watched`, with `other` as a second session of the same user.
        func perform(watched: Session, other: Session, on service: AuthServiceUnderTest) async throws {
            let client = service.client
            switch self {
            case .globalSignOutElsewhere:
                try await service.signOut(other, scope: .global)
            case .passwordChangeElsewhere:
                let request = ChangePasswordRequest(currentPassword: Passwords.initial, newPassword: Passwords.replacement)
                _ = try await client.unary(AuthContract.changePassword, request, options: service.authorized(other))
            case .localSignOutOfThisSession:
                try await service.signOut(watched, scope: .local)
            case .passwordReset:
                let email = watched.user.email
                _ = try await client.unary(
                    AuthContract.requestPasswordReset, RequestPasswordResetRequest(email: email), options: service.options())
                let token = try await service.latestToken(to: email, kind: .resetPassword)
                let request = ResetPasswordRequest(token: token, newPassword: Passwords.replacement)
                _ = try await client.unary(AuthContract.resetPassword, request, options: service.options())
            case .accountDeletion:
                let request = DeleteAccountRequest(password: Passwords.initial)
                _ = try await client.unary(AuthContract.deleteAccount, request, options: service.authorized(other))
            }
        }
    }

    @Test("the first message is SIGNED_IN with the user")
    func firstMessage() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            let (first, _) = try await service.watchingAuthState(of: session) { messages in
                var iterator = messages.makeAsyncIterator()
                let first = await iterator.next()
                try await service.signOut(session, scope: .local)  // ends the stream
                return first
            }
            let message = try #require(first)
            #expect(message.state == .signedIn)
            #expect(message.user == session.user)
        }
    }

    @Test("SIGNED_OUT arrives and the stream ends when the session is revoked", arguments: Revocation.allCases)
    func signedOut(revocation: Revocation) async throws {
        try await withAuthService { service in
            let watched = try await service.verifiedSession("ada@example.com")
            let other = try await service.signIn("ada@example.com")
            let (received, ended) = try await service.watchingAuthState(of: watched) { messages in
                var received: [WatchAuthStateResponse] = []
                var iterator = messages.makeAsyncIterator()
                if let first = await iterator.next() { received.append(first) }
                try await revocation.perform(watched: watched, other: other, on: service)
                while let next = await iterator.next() { received.append(next) }
                return received
            }
            try #require(received.count == 2, "received \(received.map(\.state)), ended \(ended)")
            #expect(received[0].state == .signedIn)
            #expect(received[1].state == .signedOut)
            #expect(received[1].user == nil)
            if case .failure(let error) = ended { Issue.record("the stream ended with \(error)") }
        }
    }

    @Test("a revoked session cannot start watching")
    func revokedCannotWatch() async throws {
        try await withAuthService { service in
            let session = try await service.verifiedSession("ada@example.com")
            try await service.signOut(session, scope: .local)
            let (received, ended) = try await service.watchingAuthState(of: session) { messages in
                var all: [WatchAuthStateResponse] = []
                for await message in messages { all.append(message) }
                return all
            }
            #expect(received.isEmpty)
            guard case .failure(let error) = ended else {
                Issue.record("a revoked session could watch")
                return
            }
            #expect(error.code == .unauthenticated)
            #expect(error.reason == AuthReason.sessionRevoked.rawValue)
        }
    }
}
