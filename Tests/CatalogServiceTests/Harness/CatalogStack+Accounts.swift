import Contracts
import Credentials
import Foundation
import RPC
import RPCHTTP2
import Testing

/// Accounts and access tokens, made through the real auth-svc of a ``CatalogStack``.
extension CatalogStack {
    /// A password every test account uses: long, uncommon, not an email.
    static let password = "amber-orchard-kettle-93"

    /// A fresh verified account's session: SignUp, the verification email's token,
    /// VerifyEmail, then SignIn.
    func signedInUser(_ email: String) async throws -> Session {
        let options = CallOptions(timeout: .seconds(15))
        _ = try await auth.client.unary(
            AuthContract.signUp, SignUpRequest(email: email, password: Self.password), options: options)
        let token = try await verificationToken(for: email)
        _ = try await auth.client.unary(AuthContract.verifyEmail, VerifyEmailRequest(token: token), options: options)
        return try await signIn(email)
    }

    /// A new session of an existing verified account.
    func signIn(_ email: String) async throws -> Session {
        try await auth.client.unary(
            AuthContract.signIn, SignInRequest(email: email, password: Self.password),
            options: CallOptions(timeout: .seconds(15)))
    }

    /// Signs `session` out through auth-svc with `scope`.
    func signOut(_ session: Session, scope: SignOutScope) async throws {
        _ = try await auth.client.unary(
            AuthContract.signOut, SignOutRequest(scope: scope), options: bearer(session.accessToken))
    }

    /// The `Token:` line of the verification email auth-svc delivered to `email`, waiting
    /// for the outbox to write it.
    func verificationToken(
        for email: String, within limit: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        let mailDirectory = authDataDirectory.appendingPathComponent("mail")
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: mailDirectory.path)) ?? []
            for name in names.sorted().reversed() where name.hasSuffix(".eml") {
                guard let data = FileManager.default.contents(atPath: mailDirectory.appendingPathComponent(name).path)
                else { continue }
                let mail = VerificationMail(text: String(decoding: data, as: UTF8.self))
                if mail.isVerification, mail.isAddressed(to: email), let token = mail.token { return token }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("no verification email to \(email) within \(limit)", sourceLocation: sourceLocation)
        throw AccountError.noVerificationMail(email)
    }

    /// The claims of `session`'s access token changed by `change`, signed with auth-svc's own
    /// key: a token whose signature is valid, so only the claims can make it fail.
    func resignedToken(_ session: Session, _ change: (inout AccessTokenClaims) -> Void) throws -> String {
        let segments = session.accessToken.split(separator: ".")
        guard segments.count == 3, let payload = Base64URL.decode(segments[1]) else {
            throw AccountError.unreadableAccessToken
        }
        var claims = try JSONDecoder().decode(AccessTokenClaims.self, from: payload)
        change(&claims)
        return try JWTSigner(key: signingKey).sign(claims)
    }
}

/// The parts of an `.eml` file auth-svc writes that the tests read (auth-svc README, "Mail").
struct VerificationMail {
    /// The header lines, each as written.
    let headerLines: [Substring]
    /// The body lines.
    let bodyLines: [Substring]

    /// Splits `text` at the first empty line.
    init(text: String) {
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
        let blank = lines.firstIndex(where: \.isEmpty) ?? lines.endIndex
        headerLines = Array(lines[..<blank])
        bodyLines = Array(lines[blank...])
    }

    /// Whether `X-Storefront-Kind` says this verifies an address.
    var isVerification: Bool {
        headerLines.contains { $0.lowercased().hasPrefix("x-storefront-kind:") && $0.contains("verify-email") }
    }

    /// Whether the `To` header names `address`.
    func isAddressed(to address: String) -> Bool {
        headerLines.contains { $0.lowercased().hasPrefix("to:") && $0.lowercased().contains(address.lowercased()) }
    }

    /// The token on the body's `Token: <token>` line.
    var token: String? {
        for line in bodyLines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("Token:") {
                return trimmed.dropFirst("Token:".count).trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}

/// Why a test account or token could not be made.
enum AccountError: Error {
    /// auth-svc delivered no verification email in time.
    case noVerificationMail(String)
    /// A session's access token is not a readable JWT.
    case unreadableAccessToken
}
