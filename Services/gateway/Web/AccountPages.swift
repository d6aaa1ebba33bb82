import Contracts
import Foundation
import Logging
import RPC

/// The pages a mailed link opens (API.md §9): `/verify-email` verifies an address,
/// `/reset-password` sets a new password, each with a form asking for a new link when the
/// old one cannot be used; and the stylesheet they share.
///
/// Each page calls auth-svc through the gateway's own router (``LocalCall``), so it meets the
/// same rate limit and reaches auth-svc with the client's address, as a gRPC call would. The
/// pages run no script, and the token — the only secret — is never logged: the call is noted
/// under the page's path, which has no query. Thread-safe: immutable.
struct AccountPages: Sendable {
    let router: Router
    let logger: Logger

    /// The paths served here.
    enum Path {
        static let verifyEmail = "/verify-email"
        static let resendVerification = "/verify-email/resend"
        static let resetPassword = "/reset-password"
        static let requestReset = "/reset-password/request"
    }

    /// The longest token looked at: auth-svc issues 43 characters and accepts no more than 512
    /// (its `InputRules.maximumTokenLength`). A longer one is refused here without a call, and
    /// is never copied into a page.
    static let maximumTokenLength = 512
    /// The longest password sent on: auth-svc refuses more than 256 characters or 4 KiB
    /// (`PasswordPolicy.maximumByteCount`); a longer one is refused here without a call.
    static let maximumPasswordBytes = 4096
    /// The longest email address copied back into a form (RFC 5321's 254).
    static let maximumEmailBytes = 254
    /// The only body a form may come as.
    static let formContentType = "application/x-www-form-urlencoded"

    /// Serves `request` when it is for one of the pages; false otherwise.
    func serve(_ request: WebRequest, response: any WebResponse) -> Bool {
        switch request.path {
        case Path.verifyEmail:
            guard accepts(request, ["GET"], response: response) else { return true }
            verifyEmail(request, response: response)
        case Path.resendVerification:
            guard accepts(request, ["GET", "POST"], response: response) else { return true }
            if request.method == "GET" {
                send(resendForm(email: "", notice: nil, status: 200), to: response)
            } else if let form = formFields(request, response: response) {
                resendVerification(request, form: form, response: response)
            }
        case Path.resetPassword:
            guard accepts(request, ["GET", "POST"], response: response) else { return true }
            if request.method == "GET" {
                showResetForm(request, response: response)
            } else if let form = formFields(request, response: response) {
                resetPassword(request, form: form, response: response)
            }
        case Path.requestReset:
            guard accepts(request, ["GET", "POST"], response: response) else { return true }
            if request.method == "GET" {
                send(requestResetForm(email: "", notice: nil, status: 200), to: response)
            } else if let form = formFields(request, response: response) {
                requestReset(request, form: form, response: response)
            }
        case PageHTML.stylesheetPath:
            serveStylesheet(request, response: response)
        default:
            return false
        }
        return true
    }

    // MARK: Requests

    /// Whether `request` uses one of `methods`; otherwise answers 405 with `allow`.
    private func accepts(_ request: WebRequest, _ methods: [String], response: any WebResponse) -> Bool {
        if methods.contains(request.method) { return true }
        let allowed = methods.joined(separator: ", ")
        send(
            AccountPage(
                status: 405, title: "This page cannot do that",
                content: PageHTML.paragraph("This address answers \(allowed) only. Open the link from your email as it is.")),
            to: response, extraHeaders: [("allow", allowed)])
        return false
    }

    /// The fields of a form posted as `application/x-www-form-urlencoded` (the first value of
    /// each name); nil after answering 415 when the body is of another type.
    private func formFields(_ request: WebRequest, response: any WebResponse) -> [String: String]? {
        let mediaType = request.headers["content-type"]?.split(separator: ";", maxSplits: 1).first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard mediaType == Self.formContentType else {
            send(
                AccountPage(
                    status: 415, title: "This form was sent in a way we cannot read",
                    content: PageHTML.paragraph("Send it from the page's own form, as \(Self.formContentType).")),
                to: response, extraHeaders: [("accept-post", Self.formContentType)])
            return nil
        }
        return Self.decodeForm(request.body)
    }

    /// The fields of an `application/x-www-form-urlencoded` body, the first value of each name.
    static func decodeForm(_ body: Data) -> [String: String] {
        WebRequest.formFields(String(decoding: body, as: UTF8.self))
    }

    /// A token as a link or form carries it: surrounding whitespace (a mail client's line
    /// break) dropped; nil when there is none.
    static func token(_ raw: String?) -> String? {
        guard let token = raw?.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty else { return nil }
        return token
    }

    /// An email address fit to copy back into a form: trimmed, and empty when too long to
    /// be one.
    static func echoedEmail(_ raw: String?) -> String {
        let email = raw?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return email.utf8.count <= maximumEmailBytes ? email : ""
    }

    // MARK: Calls

    /// Calls `method` of the gateway's router with `message`, as a call from the request's
    /// client with a new request id, and hands `completion` the response message or the
    /// error, once, on any thread. The call is noted for the request's log line under `page`
    /// (a path without query), and cancelled when the client goes away. `secrets` are the
    /// values no log line may contain.
    func call<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ message: Request, from request: WebRequest, page: String,
        secrets: [String], response: any WebResponse,
        completion: @escaping @Sendable (Result<Data, RPCError>) -> Void
    ) {
        let requestID = RequestID.next()
        let finish: @Sendable (Result<Data, RPCError>) -> Void = { [logger] result in
            if case .failure(let error) = result, Self.isServerSide(error) {
                logger.warning(
                    "an account page's call failed",
                    metadata: [
                        "request-id": "\(requestID)", "page": "\(page)", "method": "\(method.path)",
                        "code": "\(error.code.name)", "reason": "\(error.reason ?? "")",
                        "message": "\(Self.redacting(secrets, in: error.message))",
                    ])
            }
            let status: RPCError? = if case .failure(let error) = result { error } else { nil }
            response.noteCall(path: page, status: status, requestID: requestID)
            completion(result)
        }
        guard let route = router.method(forPath: method.path) else {
            return finish(.failure(GatewayError.notRouted(path: method.path).rpcError))
        }
        let body: Data
        do {
            body = try JSONCodec.shared.encode(message)
        } catch {
            return finish(.failure(error))
        }
        // No metadata of the browser's travels: the page is the client, anonymous, and the
        // router adds what the upstream needs (the client's address, vouched for). Without a
        // deadline the router gives the call the gateway's default.
        let context = ServerContext(
            method: route.info, metadata: [:], deadline: nil, requestID: requestID, peer: request.peer,
            contentType: "application/grpc+json", logger: logger, arrival: request.arrival
        ).comingOver(.page, in: request)
        let cancel = LocalCall.unary(route, context: context, request: body) { result in
            finish(result.mapError { RPCError(converting: $0) })
        }
        response.onCancel(cancel)
    }

    /// Whether `error` is the gateway's or a service's trouble rather than the client's: logged.
    static func isServerSide(_ error: RPCError) -> Bool {
        let clientSide: [RPCCode] = [
            .invalidArgument, .failedPrecondition, .notFound, .alreadyExists, .unauthenticated, .permissionDenied,
            .cancelled, .outOfRange,
        ]
        return !clientSide.contains(error.code) && !isRateLimited(error)
    }

    /// Whether `error` refuses the client for calling too often (the gateway's rate limit or
    /// auth-svc's email limits).
    static func isRateLimited(_ error: RPCError) -> Bool {
        error.code == .resourceExhausted && error.reason == "RATE_LIMITED"
    }

    /// `text` with every non-empty secret in it replaced by `<redacted>`.
    static func redacting(_ secrets: [String], in text: String) -> String {
        secrets.filter { !$0.isEmpty }.reduce(text) { $0.replacingOccurrences(of: $1, with: "<redacted>") }
    }

    /// The page for an error no form can help with: too many requests, the service busy or
    /// away, or something unexpected.
    static func troublePage(_ error: RPCError) -> AccountPage {
        if isRateLimited(error) {
            return AccountPage(
                status: 429, title: "Too many requests",
                content: PageHTML.paragraph("There have been too many requests from your network. Wait a minute, then try again."))
        }
        if [.resourceExhausted, .unavailable, .deadlineExceeded, .cancelled].contains(error.code) {
            return AccountPage(
                status: 503, title: "We cannot do this right now",
                content: PageHTML.paragraph("The shop is very busy or briefly unavailable. Please try again in a few minutes."))
        }
        return AccountPage(
            status: 500, title: "Something went wrong",
            content: PageHTML.paragraph("Something went wrong on our side. Please try again later."))
    }

    // MARK: Answers

    /// Sends `page` with the headers every page carries, plus `extraHeaders`.
    func send(_ page: AccountPage, to response: any WebResponse, extraHeaders: [(String, String)] = []) {
        var headers = PageHTML.headers
        for (name, value) in extraHeaders { headers.add(name, value) }
        response.send(status: page.status, headers: headers, body: PageHTML.document(page))
    }

    /// The pages' stylesheet: cacheable (it holds nothing secret), `GET` and `HEAD` only.
    private func serveStylesheet(_ request: WebRequest, response: any WebResponse) {
        guard accepts(request, ["GET", "HEAD"], response: response) else { return }
        let headers: WebHeaders = [
            "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=3600",
            "x-content-type-options": "nosniff",
        ]
        response.send(status: 200, headers: headers, body: request.method == "HEAD" ? Data() : PageHTML.stylesheet)
    }
}
