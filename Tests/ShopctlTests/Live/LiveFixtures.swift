import Contracts
import Credentials
import Foundation
import RPC
import ServiceTestSupport
import Testing

@testable import shopctl

/// What the live tests share: the password, the address and cards flags, JSON decoding of
/// `--json` output, and access tokens minted with the stack's signing key.
enum LiveFixtures {
    /// The password every account gets (long, uncommon, not an email).
    static let password = "amber-orchard-violin-58"

    /// The address flags of `order place`.
    static let addressFlags = [
        "--name", "Ada Lovelace", "--line1", "12 Analytical Row", "--city", "London", "--postal-code", "N1 9GU",
        "--country", "GB",
    ]

    /// The card flags for `number`, expiring 12/30.
    static func cardFlags(_ number: String) -> [String] { ["--card", number, "--exp", "12/30", "--cvc", "123"] }

    /// A fresh email address.
    static func newEmail() -> String { "shopper-\(UUID().uuidString.prefix(8).lowercased())@example.com" }

    /// The one JSON document `text` holds, decoded as `type`.
    static func decode<Message: Decodable>(
        _ type: Message.Type, _ text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Message {
        let line = try #require(text.split(separator: "\n").first, "no output", sourceLocation: sourceLocation)
        return try JSONCodec.shared.decode(type, from: Data(line.utf8))
    }

    /// Each line of `text` decoded as `type`.
    static func decodeLines<Message: Decodable>(_ type: Message.Type, _ lines: [String]) throws -> [Message] {
        try lines.map { line throws(RPCError) in try JSONCodec.shared.decode(type, from: Data(line.utf8)) }
    }

    /// `accessToken` re-signed with `key` after its expiry moved five minutes into the past:
    /// a token the gateway refuses with `ACCESS_TOKEN_EXPIRED`, exactly as a real one 15
    /// minutes old would be.
    static func expired(_ accessToken: String, key: SigningKey) throws -> String {
        let segments = accessToken.split(separator: ".")
        let payload = try #require(segments.count == 3 ? Base64URL.decode(segments[1]) : nil)
        var claims = try JSONDecoder().decode(AccessTokenClaims.self, from: payload)
        let now = Date()
        claims.issuedAt = now.addingTimeInterval(-1200)
        claims.expiresAt = now.addingTimeInterval(-300)
        return try JWTSigner(key: key).sign(claims)
    }
}

extension ShopctlRunner {
    /// Signs up `email` with `--password-stdin`, verifies it with the token of the email
    /// auth-svc delivers, and signs in; the credentials are then stored.
    func signUpAndSignIn(_ email: String, mailbox: AuthMailbox, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let password = LiveFixtures.password + "\n"
        try await succeed(["auth", "signup", "--email", email, "--password-stdin"], input: password, sourceLocation: sourceLocation)
        let token = try await mailbox.latestToken(to: email, kind: .verifyEmail, within: .seconds(15), sourceLocation: sourceLocation)
        let verified = try await succeed(["auth", "verify", token], sourceLocation: sourceLocation)
        #expect(verified.output.contains("Verified \(email)"), sourceLocation: sourceLocation)
        let login = try await succeed(["auth", "login", "--email", email, "--password-stdin"], input: password, sourceLocation: sourceLocation)
        #expect(login.output.contains("Signed in as \(email)."), sourceLocation: sourceLocation)
    }

    /// Waits until `shopctl health` answers SERVING (the gateway starts NOT_SERVING until its
    /// first round of health checks); records an issue after `limit`.
    func waitUntilServing(within limit: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + limit
        while true {
            let result = try await run(["health"])
            if result.status == 0 {
                #expect(result.output == "SERVING\n", sourceLocation: sourceLocation)
                return
            }
            #expect(result.status == 5, "\(result)", sourceLocation: sourceLocation)
            if ContinuousClock.now > deadline {
                Issue.record("the gateway never became SERVING: \(result)", sourceLocation: sourceLocation)
                return
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }
}
