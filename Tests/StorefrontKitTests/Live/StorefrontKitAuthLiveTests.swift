import Contracts
import Credentials
import Foundation
import RPC
import ServiceTestSupport
@testable import StorefrontKit
import Testing

/// Every method of `client.auth` against the debug gateway and auth-svc (processes), over
/// Connect on HTTP/1.1: what each does, and its errors as ``StorefrontError`` reasons.
@Suite("StorefrontKit auth, live")
struct StorefrontKitAuthLiveTests {
    @Test("A password account's life: sign-up, verification, sign-in, reload, reset mail, password change, deletion")
    func passwordAccount() async throws {
        try await withKitStack { kit in
            let interceptor = CountingInterceptor(requestIDPrefix: "kit-life")
            let client = try kit.client(interceptors: [interceptor])
            var changes = client.auth.stateChanges.makeAsyncIterator()
            #expect(await changes.next() == .some(nil))
            let email = KitStack.newEmail()

            await expectReason(.weakPassword, .invalidArgument) { try await client.auth.signUp(email: email, password: "short") }
            await expectReason(.invalidEmail, .invalidArgument) {
                try await client.auth.signUp(email: "not-an-email", password: KitStack.password)
            }
            let registered = try await client.auth.signUp(email: email, password: KitStack.password, displayName: "Kit")
            #expect(registered.email == email && !registered.emailVerified && registered.displayName == "Kit")
            await expectReason(.emailAlreadyInUse, .alreadyExists) {
                try await client.auth.signUp(email: email, password: KitStack.password)
            }
            await expectReason(.emailNotVerified, .failedPrecondition) {
                try await client.auth.signIn(email: email, password: KitStack.password)
            }
            #expect(client.auth.currentUser == nil)

            // Sign-up, the refused sign-in and the resend each sent a verification email.
            try await client.auth.resendVerification(email: email)
            await kit.mailbox.waitForMails(to: email, kind: .verifyEmail, count: 3, within: .seconds(10))
            await expectReason(.invalidToken, .invalidArgument) { try await client.auth.verifyEmail(token: "no-such-token") }
            let token = try await kit.mailbox.latestToken(to: email, kind: .verifyEmail)
            #expect(try await client.auth.verifyEmail(token: token).emailVerified)

            await expectReason(.invalidCredentials, .unauthenticated) {
                try await client.auth.signIn(email: email, password: "wrong-but-long-enough-9")
            }
            let user = try await client.auth.signIn(email: email, password: KitStack.password)
            #expect(user.email == email && user.emailVerified)
            #expect(client.auth.currentUser == user)
            #expect(await changes.next() == .some(user))
            #expect(try await client.auth.reload() == user)

            // A reset link goes to another account: this one has had the three emails a
            // recipient may get in five minutes.
            let resetter = try kit.client()
            let resetting = try await kit.signedInUser(resetter).email
            await resetter.close()
            try await client.auth.sendPasswordReset(email: resetting)
            _ = try await kit.mailbox.latestMail(to: resetting, kind: .resetPassword, within: .seconds(10))

            let newPassword = "copper-lantern-meadow-71"
            await expectReason(.invalidCredentials, .unauthenticated) {
                try await client.auth.changePassword(currentPassword: "wrong-but-long-enough-9", newPassword: newPassword)
            }
            await expectReason(.weakPassword, .invalidArgument) {
                try await client.auth.changePassword(currentPassword: KitStack.password, newPassword: "short")
            }
            try await client.auth.changePassword(currentPassword: KitStack.password, newPassword: newPassword)
            #expect(try await client.auth.reload() == user)  // this session goes on with its new tokens
            let other = try kit.client()
            await expectReason(.invalidCredentials, .unauthenticated) {
                try await other.auth.signIn(email: email, password: KitStack.password)
            }

            await expectReason(.invalidCredentials, .unauthenticated) {
                try await client.auth.deleteAccount(password: "wrong-but-long-enough-9")
            }
            #expect(client.auth.currentUser == user)
            try await client.auth.deleteAccount(password: newPassword)
            #expect(client.auth.currentUser == nil)
            #expect(await changes.next() == .some(nil))
            await expectReason(.invalidCredentials, .unauthenticated) {
                try await client.auth.signIn(email: email, password: newPassword)
            }
            try await client.auth.signOut()  // signed out already: nothing to do

            // The interceptor saw every request and named it; the gateway logged those names.
            #expect(interceptor.count(AuthContract.signIn.path) == 4)
            #expect(interceptor.statuses.contains(200) && interceptor.statuses.contains(401))
            let deletion = "method=\(AuthContract.deleteAccount.path) "
            let named = try kit.stack.service(.gateway).log.lines.contains { $0.contains(deletion) && $0.contains("request-id=kit-life-") }
            #expect(named)
            await client.close()
            await other.close()
        }
    }

    @Test("Google and Apple sign-in (the nonce hashed as Apple requires), sign-out everywhere ending another device's session")
    func providersAndSignOut() async throws {
        try await withKitStack { kit in
            let client = try kit.client()
            let google = try await client.auth.signInWithGoogle(
                idToken: try IDTokens.google(IDTokens.googleClaims(subject: "kit-google-1", email: "kit-google@example.com")))
            #expect(google.providers.contains("google") && client.auth.currentUser == google)
            await expectReason(.invalidCredential, .unauthenticated) {
                try await client.auth.signInWithGoogle(idToken: try IDTokens.google(key: IdentityProviderKeys.shared.get().stranger))
            }
            try await client.auth.signOut()
            #expect(client.auth.currentUser == nil)

            let nonce = AppleSignInNonce()
            var claims = IDTokens.appleClaims(subject: "kit-apple-1", rawNonce: nil)
            claims.nonce = nonce.hashed  // what the app gave Apple
            await expectReason(.invalidCredential, .unauthenticated) {
                try await client.auth.signInWithApple(idToken: try IDTokens.apple(claims), rawNonce: AppleSignInNonce().raw)
            }
            let apple = try await client.auth.signInWithApple(idToken: try IDTokens.apple(claims), rawNonce: nonce.raw)
            #expect(apple.providers.contains("apple"))

            // A second device of the same account; signing out everywhere here ends its session
            // too: its next refresh is refused, and it signs out.
            let otherStore = MemoryCredentialStore()
            let other = try kit.client(store: otherStore)
            try await other.auth.signInWithApple(idToken: try IDTokens.apple(claims), rawNonce: nonce.raw)
            try await client.auth.signOut(everywhere: true)
            #expect(client.auth.currentUser == nil)
            let expiring = try #require(otherStore.load())
            otherStore.save(StoredSession(
                accessToken: expiring.accessToken, refreshToken: expiring.refreshToken, accessTokenExpiresAt: .distantPast,
                user: expiring.user))
            let relaunched = try kit.client(store: otherStore)
            #expect(relaunched.auth.currentUser == apple)
            var changes = relaunched.auth.stateChanges.makeAsyncIterator()
            #expect(await changes.next() == .some(apple))
            await expectCode(.unauthenticated) { try await relaunched.auth.reload() }
            #expect(await changes.next() == .some(nil))
            #expect(otherStore.load() == nil)

            // An ID-token user who signed in just now deletes without a password.
            try await client.auth.signInWithApple(idToken: try IDTokens.apple(claims), rawNonce: nonce.raw)
            try await client.auth.deleteAccount(password: nil)
            #expect(client.auth.currentUser == nil)
            for each in [client, other, relaunched] { await each.close() }
        }
    }
}

/// Expects `body` to throw a ``StorefrontError`` with `reason` and `code`.
func expectReason(
    _ reason: StorefrontError.Reason, _ code: StorefrontError.Code, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected \(code.name) (\(reason.wireName)), got success", sourceLocation: sourceLocation)
    } catch let error as StorefrontError {
        #expect(error.reason == reason, "\(error)", sourceLocation: sourceLocation)
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected a StorefrontError, got \(error)", sourceLocation: sourceLocation)
    }
}

/// Expects `body` to throw a ``StorefrontError`` with `code`; returns it.
@discardableResult
func expectCode(
    _ code: StorefrontError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> StorefrontError? {
    do {
        try await body()
        Issue.record("expected \(code.name), got success", sourceLocation: sourceLocation)
    } catch let error as StorefrontError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a StorefrontError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
