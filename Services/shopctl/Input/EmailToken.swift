import ArgumentParser
import Foundation

/// The token of a verification or reset email as people paste it: the token itself, or the
/// whole link that carries it (`…/verify-email?token=…`), with whatever whitespace and line
/// ending came along (emails end their lines with CR LF). Tokens are base64url: no whitespace
/// of their own to lose.
enum EmailToken {
    /// The token in `text`; a `ValidationError` naming what is wrong when there is none.
    static func parse(_ text: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.contains("://") || trimmed.hasPrefix("/") else {
            guard !trimmed.isEmpty else { throw ValidationError("TOKEN is empty.") }
            return trimmed
        }
        guard let link = URLComponents(string: trimmed),
            let token = link.queryItems?.first(where: { $0.name == "token" })?.value?
                .trimmingCharacters(in: .whitespacesAndNewlines),
            !token.isEmpty
        else { throw ValidationError("The link has no token: pass the token, or the link from the email as it is.") }
        return token
    }
}
