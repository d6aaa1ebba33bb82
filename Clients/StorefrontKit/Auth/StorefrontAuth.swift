import Contracts
import Foundation
import RPC

/// Users and their session, as a Firebase app knows them from `Auth.auth()`: sign-up and
/// sign-in (password, Google, Apple), the signed-in ``currentUser`` and its ``stateChanges``,
/// sign-out; the account's emails and password are in `StorefrontAuth+Account.swift`.
///
/// A signed-in session is kept in the configuration's ``CredentialStore`` and refreshed on its
/// own; a session the server ends (signed out everywhere, the refresh token reused) signs the
/// user out here, and ``stateChanges`` yields nil.
///
/// Thread-safe.
public struct StorefrontAuth: Sendable {
    let calls: StorefrontCalls
    let broadcast: AuthStateBroadcast

    /// The signed-in user; nil when signed out. As the client last heard it (``reload()``
    /// asks the server).
    public var currentUser: User? { broadcast.user }

    /// The signed-in user now, then at every change (sign-in, sign-out, the account
    /// changing) until the consumer stops iterating. A slow consumer gets the latest user.
    public var stateChanges: AsyncStream<User?> { broadcast.stream() }

    /// Registers an account; the user is not signed in until the email is verified (a
    /// verification email is on its way).
    ///
    /// - Throws: `.invalidEmail`, `.weakPassword`, `.emailAlreadyInUse`, `.rateLimited`.
    @discardableResult
    public func signUp(email: String, password: String, displayName: String? = nil) async throws(StorefrontError) -> User {
        try await calls.anonymous(AuthContract.signUp, SignUpRequest(email: email, password: password, displayName: displayName)).user
    }

    /// Signs in with email and password.
    ///
    /// - Throws: `.invalidCredentials`, `.emailNotVerified` (a new verification email is
    ///   sent), `.tooManyAttempts`.
    @discardableResult
    public func signIn(email: String, password: String) async throws(StorefrontError) -> User {
        try await keep(calls.anonymous(AuthContract.signIn, SignInRequest(email: email, password: password)))
    }

    /// Signs in with the ID token of Sign in with Apple and the raw nonce whose SHA-256 the
    /// app gave Apple (``AppleSignInNonce``): the server checks `nonce == hex(SHA256(rawNonce))`.
    ///
    /// - Throws: `.invalidCredential`, `.unsupportedProvider` when the server has no Apple
    ///   sign-in configured.
    @discardableResult
    public func signInWithApple(idToken: String, rawNonce: String) async throws(StorefrontError) -> User {
        try await signIn(provider: .apple, idToken: idToken, rawNonce: rawNonce)
    }

    /// Signs in with a Google ID token (from Google Sign-In).
    ///
    /// - Throws: `.invalidCredential`, `.unsupportedProvider`.
    @discardableResult
    public func signInWithGoogle(idToken: String) async throws(StorefrontError) -> User {
        try await signIn(provider: .google, idToken: idToken, rawNonce: nil)
    }

    /// Signs out: ends the session on the server — on every device with `everywhere` — and
    /// forgets it here. Signed out here even when the server cannot be reached (then it
    /// throws after); a session the server had already ended is no error. Nothing happens
    /// when no one is signed in.
    public func signOut(everywhere: Bool = false) async throws(StorefrontError) {
        guard await calls.sessions.current != nil else { return }
        var serverError: StorefrontError?
        do {
            _ = try await calls.signedIn(AuthContract.signOut, SignOutRequest(scope: everywhere ? .global : .local))
        } catch where error.code != .unauthenticated {
            serverError = error
        } catch {}  // the session had ended on the server already
        try await forgetSession()
        if let serverError { throw serverError }
    }

    /// Asks the server for the signed-in user's account (has the email been verified?) and
    /// keeps it; nil when signed out.
    @discardableResult
    public func reload() async throws(StorefrontError) -> User? {
        guard await calls.sessions.current != nil else { return nil }
        let user = try await calls.signedIn(AuthContract.getCurrentUser, Empty()).user
        do { try await calls.sessions.update(user) } catch { throw StorefrontError.converting(error) }
        return user
    }

    // MARK: Sessions

    /// Signs in with an identity provider's ID token.
    private func signIn(provider: IdentityProvider, idToken: String, rawNonce: String?) async throws(StorefrontError) -> User {
        try await keep(calls.anonymous(
            AuthContract.signInWithIdToken, SignInWithIdTokenRequest(provider: provider, idToken: idToken, rawNonce: rawNonce)))
    }

    /// Keeps `session` as the signed-in session; returns its user.
    func keep(_ session: Session) async throws(StorefrontError) -> User {
        do {
            return try await calls.sessions.signedIn(session).user
        } catch {
            throw StorefrontError.converting(error)
        }
    }

    /// Forgets the session here.
    func forgetSession() async throws(StorefrontError) {
        do { try await calls.sessions.signOut() } catch { throw StorefrontError.converting(error) }
    }
}
