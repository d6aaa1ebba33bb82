import Contracts
import Credentials
import Foundation
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Testing

/// Passwords the policy accepts: long enough, not common, not an email.
enum Passwords {
    /// The password accounts are created with.
    static let initial = "blue-harbor-lantern-42"
    /// A second acceptable password, for changes and resets.
    static let replacement = "quiet-meadow-copper-77"
}

/// The calls most tests make: accounts, sessions, options and raw JSON calls.
extension AuthServiceUnderTest {
    /// Options with a timeout and no credentials.
    func options(timeout: Duration = .seconds(15)) -> CallOptions {
        CallOptions(timeout: timeout)
    }

    /// Options carrying `authorization: Bearer <accessToken>` of `session`.
    func authorized(_ session: Session, timeout: Duration = .seconds(15)) -> CallOptions {
        authorized(token: session.accessToken, timeout: timeout)
    }

    /// Options carrying `authorization: Bearer <token>`.
    func authorized(token: String, timeout: Duration = .seconds(15)) -> CallOptions {
        CallOptions(metadata: [MetadataKey.authorization: "Bearer \(token)"], timeout: timeout)
    }

    /// Options carrying the internal API key, and `x-forwarded-for` when given.
    func internalOptions(forwardedFor address: String? = nil, timeout: Duration = .seconds(15)) -> CallOptions {
        var metadata: Metadata = [MetadataKey.apiKey: internalAPIKey]
        if let address { metadata.set("x-forwarded-for", address) }
        return CallOptions(metadata: metadata, timeout: timeout)
    }

    /// Signs up a password account (unverified).
    @discardableResult
    func signUp(
        _ email: String, password: String = Passwords.initial, displayName: String? = nil,
        options: CallOptions? = nil
    ) async throws -> User {
        let request = SignUpRequest(email: email, password: password, displayName: displayName)
        return try await client.unary(AuthContract.signUp, request, options: options ?? self.options()).user
    }

    /// Redeems the newest verification email sent to `email`.
    @discardableResult
    func verifyLatestMail(to email: String) async throws -> User {
        let token = try await latestToken(to: email, kind: .verifyEmail)
        return try await client.unary(AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: options()).user
    }

    /// Signs up and verifies a password account; returns the verified user.
    @discardableResult
    func signUpAndVerify(
        _ email: String, password: String = Passwords.initial, displayName: String? = nil
    ) async throws -> User {
        try await signUp(email, password: password, displayName: displayName)
        return try await verifyLatestMail(to: email)
    }

    /// Signs in with email and password.
    func signIn(_ email: String, password: String = Passwords.initial, timeout: Duration = .seconds(15)) async throws -> Session {
        try await client.unary(
            AuthContract.signIn, SignInRequest(email: email, password: password), options: options(timeout: timeout))
    }

    /// Signs up, verifies and signs in: a session of a fresh verified account.
    func verifiedSession(_ email: String, password: String = Passwords.initial) async throws -> Session {
        try await signUpAndVerify(email, password: password)
        return try await signIn(email, password: password)
    }

    /// Signs in with an ID token.
    func signIn(
        with provider: IdentityProvider, idToken: String, rawNonce: String? = nil
    ) async throws -> Session {
        let request = SignInWithIdTokenRequest(provider: provider, idToken: idToken, rawNonce: rawNonce)
        return try await client.unary(AuthContract.signInWithIdToken, request, options: options())
    }

    /// The user `session`'s access token names, as `GetCurrentUser` answers.
    func currentUser(_ session: Session) async throws -> User {
        try await client.unary(AuthContract.getCurrentUser, Empty(), options: authorized(session)).user
    }

    /// Refreshes with `refreshToken`.
    func refresh(_ refreshToken: String) async throws -> Session {
        try await client.unary(
            AuthContract.refreshSession, RefreshSessionRequest(refreshToken: refreshToken), options: options())
    }

    /// Signs `session` out with `scope`.
    func signOut(_ session: Session, scope: SignOutScope) async throws {
        _ = try await client.unary(AuthContract.signOut, SignOutRequest(scope: scope), options: authorized(session))
    }

    /// The public keys from `GetJwks`, as a verifier of this service's access tokens.
    func accessTokenVerifier() async throws -> JWTVerifier {
        let response = try await client.unary(AuthContract.getJwks, Empty(), options: options())
        let keys = JWKSet(keys: response.keys.map(Credentials.JWK.init(contract:)))
        return JWTVerifier.accessTokens(keys: keys, issuer: Self.issuer, audience: Self.audience)
    }

    /// Sends `json` as the one request message of `path` and collects the response messages;
    /// for bodies no typed request can express.
    func rawCall(
        _ path: String, json: some DataProtocol, metadata: Metadata = Metadata(), timeout: Duration = .seconds(15)
    ) async throws -> [Data] {
        try await client.withCall(path: path, options: CallOptions(metadata: metadata, timeout: timeout)) { call in
            try await call.send(Data(json))
            call.finishSending()
            var messages: [Data] = []
            while let message = try await call.nextMessage() { messages.append(message) }
            return messages
        }
    }

    /// Watches `session` (`WatchAuthState`) while `body` runs with the stream of received
    /// messages; returns `body`'s result and how the call ended.
    func watchingAuthState<Value: Sendable>(
        of session: Session, _ body: (AsyncStream<WatchAuthStateResponse>) async throws -> Value
    ) async throws -> (Value, ended: Result<Void, RPCError>) {
        let (messages, sink) = AsyncStream<WatchAuthStateResponse>.makeStream()
        let options = authorized(session, timeout: .seconds(20))
        return try await withThrowingTaskGroup(of: Result<Void, RPCError>.self) { group in
            group.addTask {
                defer { sink.finish() }
                do {
                    try await self.client.serverStreaming(AuthContract.watchAuthState, Empty(), options: options) { stream in
                        for try await message in stream { sink.yield(message) }
                    }
                    return .success(())
                } catch {
                    return .failure(RPCError(converting: error))
                }
            }
            let result = try await body(messages)
            let ended = try await group.next() ?? .success(())
            return (result, ended)
        }
    }

    /// Whether the service still answers: a health check and `GetJwks` both succeed.
    func isServing() async -> Bool {
        guard let health = try? await client.unary(HealthContract.check, HealthCheckRequest(), options: options()),
            health.status == .serving
        else { return false }
        return (try? await client.unary(AuthContract.getJwks, Empty(), options: options())) != nil
    }
}
