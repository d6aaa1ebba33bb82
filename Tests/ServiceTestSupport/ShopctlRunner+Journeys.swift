import Foundation
import RPC
package import Testing

/// The steps every live journey through `shopctl` begins with, and the decoding of `--json`
/// output.
extension ShopctlRunner {
    /// Signs up `email` with `--password-stdin`, verifies it with the token of the email
    /// auth-svc delivers into `mailbox`, and signs in; the credentials are then stored.
    package func signUpAndSignIn(
        _ email: String, password: String, mailbox: AuthMailbox, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let line = password + "\n"
        try await succeed(["auth", "signup", "--email", email, "--password-stdin"], input: line, sourceLocation: sourceLocation)
        let token = try await mailbox.latestToken(to: email, kind: .verifyEmail, within: .seconds(15), sourceLocation: sourceLocation)
        let verified = try await succeed(["auth", "verify", token], sourceLocation: sourceLocation)
        #expect(verified.output.contains("Verified \(email)"), "\(verified)", sourceLocation: sourceLocation)
        let login = try await succeed(["auth", "login", "--email", email, "--password-stdin"], input: line, sourceLocation: sourceLocation)
        #expect(login.output.contains("Signed in as \(email)."), "\(login)", sourceLocation: sourceLocation)
    }

    /// Waits until `shopctl health` answers SERVING (the gateway starts NOT_SERVING until its
    /// first round of health checks); records an issue after `limit`.
    package func waitUntilServing(within limit: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation) async throws {
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

/// `shopctl --json` output: one JSON document per line, each exactly the message the server sent.
package enum ShopctlJSON {
    /// The one JSON document `text` holds (its first line), decoded as `type`.
    package static func decode<Message: Decodable>(
        _ type: Message.Type, _ text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Message {
        let line = try #require(text.split(separator: "\n").first, "no output", sourceLocation: sourceLocation)
        return try JSONCodec.shared.decode(type, from: Data(line.utf8))
    }

    /// Each line of `lines` decoded as `type`.
    package static func decodeLines<Message: Decodable>(_ type: Message.Type, _ lines: [String]) throws -> [Message] {
        try lines.map { line throws(RPCError) in try JSONCodec.shared.decode(type, from: Data(line.utf8)) }
    }
}
