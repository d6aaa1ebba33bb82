/// The texts of the emails auth-svc sends: a link to the gateway's page for it (API.md §9)
/// and, on a line of its own, the token, so that an app can deep-link and a person can paste.
struct AuthEmails: Sendable {
    /// The gateway's public URL (`--public-url`), e.g. `https://shop.example.com`, without a
    /// trailing slash: links are `<linkBaseURL>/verify-email?token=…`.
    let linkBaseURL: String

    /// Creates the templates with links under `linkBaseURL` (trailing slashes dropped).
    init(linkBaseURL: String) {
        var base = linkBaseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.linkBaseURL = base
    }

    /// The email that verifies `recipient` with `token`.
    func verification(to recipient: String, token: String) -> OutgoingEmail {
        OutgoingEmail(
            recipient: recipient, kind: .verifyEmail, subject: "Verify your email address",
            body: """
                Hello,

                Please confirm that this is your email address by opening this link:

                \(linkBaseURL)/verify-email?token=\(token)

                Token: \(token)

                The link works once and expires in 24 hours. If you did not create an account,
                you can ignore this email.
                """)
    }

    /// The email that lets `recipient` set a new password with `token`.
    func passwordReset(to recipient: String, token: String) -> OutgoingEmail {
        OutgoingEmail(
            recipient: recipient, kind: .resetPassword, subject: "Reset your password",
            body: """
                Hello,

                Someone asked to reset the password of your account. To choose a new password,
                open this link:

                \(linkBaseURL)/reset-password?token=\(token)

                Token: \(token)

                The link works once and expires in 1 hour. If you did not ask for this, you can
                ignore this email; your password stays as it is.
                """)
    }
}
