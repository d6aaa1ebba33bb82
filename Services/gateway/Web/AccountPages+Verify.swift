import Contracts
import Foundation
import RPC

/// `GET /verify-email?token=…` and the form that asks for a new verification link.
extension AccountPages {
    /// Verifies the address the token was mailed to, and says so — or why not, with the form
    /// for a new link.
    func verifyEmail(_ request: WebRequest, response: any WebResponse) {
        guard let token = Self.token(request.queryValue("token")) else {
            return send(
                resendForm(
                    title: "This link is incomplete", status: 400,
                    explanation: PageHTML.paragraph("The link has no verification code. Open it from the email again — if your mail app split it over two lines, copy all of it — or ask for a new link.")),
                to: response)
        }
        guard token.utf8.count <= Self.maximumTokenLength else {
            return send(invalidVerificationLink(), to: response)
        }
        call(
            AuthContract.verifyEmail, VerifyEmailRequest(token: token), from: request, page: Path.verifyEmail,
            secrets: [token], response: response
        ) { result in
            switch result {
            case .success(let answer):
                let email = (try? JSONCodec.shared.decode(UserResponse.self, from: answer))?.user.email
                let confirmed: HTML =
                    if let email { "<p>Thank you: <strong>\(email)</strong> is confirmed. You can now sign in and shop.</p>" }
                    else { PageHTML.paragraph("Thank you: your address is confirmed. You can now sign in and shop.") }
                send(
                    AccountPage(
                        status: 200, title: "Your email address is verified",
                        content: "\(confirmed)\(PageHTML.button("Go to the shop", to: "/"))"),
                    to: response)
            case .failure(let error) where error.reason == AuthReason.tokenExpired.rawValue:
                send(
                    resendForm(
                        title: "This link has expired", status: 410,
                        explanation: PageHTML.paragraph("Verification links work for 24 hours. Ask for a new one: it goes to the same address.")),
                    to: response)
            case .failure(let error) where error.reason == AuthReason.invalidToken.rawValue:
                send(invalidVerificationLink(), to: response)
            case .failure(let error):
                send(Self.troublePage(error), to: response)
            }
        }
    }

    /// The page for a token auth-svc does not know (or no longer: it was used).
    private func invalidVerificationLink() -> AccountPage {
        resendForm(
            title: "This link cannot be used", status: 400,
            explanation: """
                <p>It is not a valid verification link, or it was already used. If you opened it before, your address is verified and you can <a href="/">go to the shop</a>. Otherwise, ask for a new link.</p>
                """)
    }

    /// `POST /verify-email/resend` (`email`): asks auth-svc for a new verification email and
    /// answers the same whether or not the address has an account.
    func resendVerification(_ request: WebRequest, form: [String: String], response: any WebResponse) {
        let email = Self.echoedEmail(form["email"])
        mailLink(
            AuthContract.resendVerification, ResendVerificationRequest(email: email), email: email, from: request,
            page: Path.resendVerification, missing: "Enter the email address you signed up with.",
            sent: " and is not verified yet, a new link is on its way. It works for 24 hours.",
            form: { email, notice, status in resendForm(email: email, notice: notice, status: status) }, response: response)
    }

    /// The page with the form that asks for a new verification link (`GET /verify-email/resend`,
    /// or after a problem with the form), `email` filled in.
    func resendForm(email: String, notice: String?, status: Int) -> AccountPage {
        AccountPage(
            status: status, title: "Send a new verification link",
            content: """
                \(notice.map(PageHTML.notice))
                \(PageHTML.paragraph("Enter the address you signed up with. If it has an account waiting for verification, we email it a new link."))
                \(PageHTML.emailForm(action: Path.resendVerification, email: email, submit: "Send a new link"))
                """)
    }

    /// A page explaining why a link cannot verify, with the form for a new one.
    private func resendForm(title: String, status: Int, explanation: HTML) -> AccountPage {
        AccountPage(
            status: status, title: title,
            content: """
                \(explanation)
                \(PageHTML.emailForm(action: Path.resendVerification, email: "", submit: "Send a new link"))
                """)
    }
}
