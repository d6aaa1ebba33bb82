package import Contracts
package import Foundation
package import RPC
package import Testing

/// Verified, signed-in accounts made through a real auth-svc the way a person would: SignUp,
/// the `Token:` line of the verification email it delivers, VerifyEmail, then SignIn.
/// Immutable; `Sendable`.
package struct TestAccounts: Sendable {
    /// A client of auth-svc.
    package let client: RPCClient
    /// Where auth-svc delivers its emails.
    package let mailbox: AuthMailbox
    /// The password every account is created with.
    package let password: String

    /// Accounts made through `client`, whose auth-svc runs with `--data-dir authDataDirectory`.
    package init(client: RPCClient, authDataDirectory: URL, password: String) {
        self.client = client
        mailbox = AuthMailbox(authDataDirectory: authDataDirectory)
        self.password = password
    }

    /// Signs up `email`, redeems its verification email (waiting up to 10 s for the outbox)
    /// and signs in; returns the session.
    package func signedInUser(_ email: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Session {
        let options = CallOptions(timeout: .seconds(15))
        _ = try await client.unary(AuthContract.signUp, SignUpRequest(email: email, password: password), options: options)
        let token = try await mailbox.latestToken(
            to: email, kind: .verifyEmail, within: .seconds(10), sourceLocation: sourceLocation)
        _ = try await client.unary(AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: options)
        return try await signIn(email)
    }

    /// A new session of the existing verified account `email`.
    package func signIn(_ email: String) async throws -> Session {
        try await client.unary(
            AuthContract.signIn, SignInRequest(email: email, password: password),
            options: CallOptions(timeout: .seconds(15)))
    }
}
