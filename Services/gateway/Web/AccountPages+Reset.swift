import Contracts
import Foundation
import RPC
import JSON

/// `GET|POST /reset-password` and the form that asks for a new reset link.
extension AccountPages {
    /// `GET /reset-password?token=…`: the form for the new password. The token is not checked
    /// here (auth-svc can only check it by using it): a form sent with a used or expired one
    /// says so.
    func showResetForm(_ request: WebRequest, response: any WebResponse) {
        guard let token = Self.token(request.queryValue("token")) else {
            return send(incompleteResetLink(), to: response)
        }
        guard token.utf8.count <= Self.maximumTokenLength else { return send(invalidResetLink(), to: response) }
        send(resetForm(token: token, notice: nil, status: 200), to: response)
    }

    /// `POST /reset-password` (`token`, `password`, `confirm`): sets the new password, or shows
    /// the form again with what to change.
    func resetPassword(_ request: WebRequest, form: [String: String], response: any WebResponse) {
        guard let token = Self.token(form["token"]) else { return send(incompleteResetLink(), to: response) }
        guard token.utf8.count <= Self.maximumTokenLength else { return send(invalidResetLink(), to: response) }
        let password = form["password"] ?? ""
        guard password == form["confirm"] ?? "" else {
            return send(resetForm(token: token, notice: "The two passwords are not the same. Type the new one twice.", status: 400), to: response)
        }
        guard password.utf8.count <= Self.maximumPasswordBytes else {
            return send(resetForm(token: token, notice: "The password must be at most 256 characters long.", status: 400), to: response)
        }
        call(
            AuthContract.resetPassword, ResetPasswordRequest(token: token, newPassword: password), from: request,
            page: Path.resetPassword, secrets: [token, password], response: response
        ) { result in
            switch result {
            case .success:
                send(
                    AccountPage(
                        status: 200, title: "Your password is changed",
                        content: """
                            \(PageHTML.paragraph("You can sign in with it now. For your safety, every device that was signed in to your account has been signed out."))
                            \(PageHTML.button("Sign in", to: "/"))
                            """),
                    to: response)
            case .failure(let error) where error.reason == AuthReason.weakPassword.rawValue:
                send(resetForm(token: token, notice: Self.passwordProblem(error), status: 400), to: response)
            case .failure(let error) where error.reason == AuthReason.tokenExpired.rawValue:
                send(
                    requestResetForm(
                        title: "This link has expired", status: 410,
                        explanation: "Reset links work for 1 hour. Ask for a new one: it goes to the same address."),
                    to: response)
            case .failure(let error) where error.reason == AuthReason.invalidToken.rawValue:
                send(invalidResetLink(), to: response)
            case .failure(let error) where Self.isServerSide(error) || Self.isRateLimited(error):
                // The link is still good: the form again, to send once the trouble has passed.
                let trouble = Self.troublePage(error)
                send(resetForm(token: token, notice: "\(trouble.title). Please try again in a moment.", status: trouble.status), to: response)
            case .failure(let error):
                send(Self.troublePage(error), to: response)
            }
        }
    }

    /// What auth-svc said is wrong with a password, in its words: the field violation's
    /// description, a sentence for the user ("The password must be at least 8 characters
    /// long.") or a predicate ("must be at most 256 characters"), made a sentence.
    static func passwordProblem(_ error: RPCError) -> String {
        guard let description = error.details?["fieldViolations"]?.arrayValue?.first?["description"]?.stringValue,
            let first = description.first
        else {
            return "This password cannot be used. Choose another one that follows the rules below."
        }
        return first.isLowercase ? "The password \(description)." : description
    }

    /// `POST /reset-password/request` (`email`): asks auth-svc for a reset email and answers the
    /// same whether or not the address has an account.
    func requestReset(_ request: WebRequest, form: [String: String], response: any WebResponse) {
        let email = Self.echoedEmail(form["email"])
        mailLink(
            AuthContract.requestPasswordReset, RequestPasswordResetRequest(email: email), email: email, from: request,
            page: Path.requestReset, missing: "Enter the email address of your account.",
            sent: ", a link to choose a new password is on its way. It works for 1 hour.",
            form: { email, notice, status in requestResetForm(email: email, notice: notice, status: status) }, response: response)
    }

    /// Asks auth-svc (`method`) to mail a link to `email` and says, in the same words whether
    /// or not the address has an account, that "if an account exists for it`sent`"; a missing
    /// or invalid address or a rate limit shows `form` again with the reason.
    func mailLink<Request>(
        _ method: MethodDescriptor<Request, Empty>, _ message: Request, email: String, from request: WebRequest, page: String,
        missing: String, sent: String, form: @escaping @Sendable (String, String?, Int) -> AccountPage,
        response: any WebResponse
    ) {
        guard !email.isEmpty else { return send(form("", missing, 400), to: response) }
        call(method, message, from: request, page: page, secrets: [], response: response) { result in
            switch result {
            case .success:
                send(
                    AccountPage(
                        status: 200, title: "Check your inbox",
                        content: """
                            <p>If an account exists for <strong>\(email)</strong>\(HTML(unescaped: sent))</p>
                            \(PageHTML.button("Go to the shop", to: "/"))
                            """),
                    to: response)
            case .failure(let error) where error.reason == AuthReason.invalidEmail.rawValue:
                send(form(email, "Enter a valid email address, like name@example.com.", 400), to: response)
            case .failure(let error) where Self.isRateLimited(error):
                send(form(email, "You have asked for several links in a short time. Wait a few minutes, then try again.", 429), to: response)
            case .failure(let error):
                send(Self.troublePage(error), to: response)
            }
        }
    }

    /// The form for the new password, with the policy's rules (API.md §3) and the token in a
    /// hidden field, so that it is posted in the body rather than in an address.
    func resetForm(token: String, notice: String?, status: Int) -> AccountPage {
        AccountPage(
            status: status, title: "Choose a new password",
            content: """
                \(notice.map(PageHTML.notice))
                <p>Your new password:</p>
                <ul>
                <li>has 8 to 256 characters (spaces and any symbols are fine; a few random words make a good one);</li>
                <li>is not your email address;</li>
                <li>is not a commonly used password.</li>
                </ul>
                <form method="post" action="\(Path.resetPassword)">
                <input type="hidden" name="token" value="\(token)">
                <label for="password">New password</label>
                <input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required>
                <label for="confirm">The same password again</label>
                <input id="confirm" name="confirm" type="password" autocomplete="new-password" minlength="8" required>
                <button type="submit">Set the new password</button>
                </form>
                """)
    }

    /// The page with the form that asks for a reset link (`GET /reset-password/request`, or
    /// after a problem with the form), `email` filled in.
    func requestResetForm(email: String, notice: String?, status: Int) -> AccountPage {
        AccountPage(
            status: status, title: "Reset your password",
            content: """
                \(notice.map(PageHTML.notice))
                \(PageHTML.paragraph("Enter the address of your account. If it has one, we email it a link to choose a new password."))
                \(PageHTML.emailForm(action: Path.requestReset, email: email, submit: "Send a reset link"))
                """)
    }

    /// A page explaining why a reset link cannot be used, with the form for a new one.
    private func requestResetForm(title: String, status: Int, explanation: String) -> AccountPage {
        AccountPage(
            status: status, title: title,
            content: """
                \(PageHTML.paragraph(explanation))
                \(PageHTML.emailForm(action: Path.requestReset, email: "", submit: "Send a new link"))
                """)
    }

    /// The page for a reset link without its token.
    private func incompleteResetLink() -> AccountPage {
        requestResetForm(
            title: "This link is incomplete", status: 400,
            explanation: "The link has no reset code. Open it from the email again — if your mail app split it over two lines, copy all of it — or ask for a new link.")
    }

    /// The page for a token auth-svc does not know (or no longer: it was used).
    private func invalidResetLink() -> AccountPage {
        requestResetForm(
            title: "This link cannot be used", status: 400,
            explanation: "It is not a valid reset link, or it was already used. Ask for a new one below.")
    }
}
