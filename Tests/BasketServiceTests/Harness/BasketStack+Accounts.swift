import Contracts
import Foundation
import RPC
import RPCHTTP2
import Testing

/// Signed-in users, made the way a person would: sign up, open the verification email that
/// auth-svc wrote into `<auth data>/mail/*.eml`, verify, sign in.
extension BasketStack {
    /// The password every test account has.
    static let password = "amber-orchard-violin-58"

    /// A new verified account for `name@shop.test`, signed in.
    func shopper(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Shopper {
        let email = "\(name)@shop.test"
        let options = CallOptions(timeout: .seconds(15))
        _ = try await authClient.unary(
            AuthContract.signUp, SignUpRequest(email: email, password: Self.password), options: options)
        let token = try await verificationToken(for: email)
        _ = try await authClient.unary(AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: options)
        return try await signIn(email)
    }

    /// A new session of the account `shopper` belongs to: another device of the same user.
    func anotherSession(of shopper: Shopper) async throws -> Shopper {
        try await signIn(shopper.email)
    }

    /// Signs `email` in with the test password.
    private func signIn(_ email: String) async throws -> Shopper {
        let session = try await authClient.unary(
            AuthContract.signIn, SignInRequest(email: email, password: Self.password),
            options: CallOptions(timeout: .seconds(15)))
        return Shopper(email: email, userID: session.user.id, accessToken: session.accessToken, client: basketClient)
    }

    /// The token of the verification email to `email`, waiting for the outbox to deliver it.
    private func verificationToken(for email: String) async throws -> String {
        let mail = root.appendingPathComponent("auth-svc/mail")
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: mail.path)) ?? []
            for name in names where name.hasSuffix(".eml") {
                guard let text = try? String(contentsOf: mail.appendingPathComponent(name), encoding: .utf8),
                    text.localizedCaseInsensitiveContains(email), text.contains("verify-email")
                else { continue }
                for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("Token: ") {
                    return String(line.dropFirst("Token: ".count)).trimmingCharacters(in: .whitespaces)
                }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw StackError.noVerificationMail(email)
    }
}
