import Contracts
import Foundation
import RPC
import RPCHTTP2
import Testing

/// A signed-in, verified user of a stack: who they are and the token their calls carry.
struct Shopper: Sendable {
    /// The account's email address.
    let email: String
    /// The user id (the access token's subject, and `orders.user_id`).
    let userID: String
    /// The access token of the session.
    let accessToken: String

    /// Metadata with `authorization: Bearer <accessToken>`.
    var authorization: Metadata { [MetadataKey.authorization: "Bearer \(accessToken)"] }

    /// Call options with the authorization and `timeout`.
    func options(timeout: Duration = .seconds(15)) -> CallOptions {
        CallOptions(metadata: authorization, timeout: timeout)
    }
}

/// Accounts: sign up, verify from the delivered email, sign in.
extension OrderStack {
    /// The password every shopper is created with (long, uncommon, not an email).
    static let password = "amber-orchard-violin-58"

    /// Signs up a fresh account, redeems its verification email and signs in.
    func newShopper(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Shopper {
        let auth = try client(.auth)
        let email = "shopper-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let options = CallOptions(timeout: .seconds(15))
        let user = try await auth.unary(
            AuthContract.signUp, SignUpRequest(email: email, password: Self.password), options: options
        ).user
        let token = try await verificationToken(to: email, sourceLocation: sourceLocation)
        _ = try await auth.unary(AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: options)
        let session = try await auth.unary(
            AuthContract.signIn, SignInRequest(email: email, password: Self.password), options: options)
        return Shopper(email: email, userID: user.id, accessToken: session.accessToken)
    }

    /// The `Token:` line of the verification email auth-svc wrote to `<auth-data>/mail/` for
    /// `email`, waiting up to 10 seconds for the outbox to deliver it.
    private func verificationToken(to email: String, sourceLocation: SourceLocation) async throws -> String {
        let mailDirectory = dataDirectory(.auth).appendingPathComponent("mail")
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: mailDirectory.path)) ?? []
            for name in names where name.hasSuffix(".eml") {
                guard let data = FileManager.default.contents(atPath: mailDirectory.appendingPathComponent(name).path)
                else { continue }
                let text = String(decoding: data, as: UTF8.self)
                guard text.localizedCaseInsensitiveContains(email), let token = Self.token(in: text) else { continue }
                return token
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("no verification email reached \(email)", sourceLocation: sourceLocation)
        throw StackError.noVerificationMail(email)
    }

    /// The value of the first `Token: <token>` line of an email's text.
    private static func token(in text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("Token:") else { continue }
            let token = trimmed.dropFirst("Token:".count).trimmingCharacters(in: .whitespaces)
            if !token.isEmpty { return token }
        }
        return nil
    }
}
