import Contracts
import Foundation
import RPC

/// A response message, decoded, together with the bytes the server sent (what `--json` prints).
struct Reply<Message: Sendable>: Sendable {
    /// The decoded message.
    let message: Message
    /// The message's JSON exactly as received.
    let raw: Data
}

/// Whose credentials a call carries.
enum CallAuthorization: Sendable, Equatable {
    /// None: sign-up, sign-in, the catalog, admin methods (which carry an API key instead).
    case none
    /// The stored session's access token; without one the call is not made (`NOT_SIGNED_IN`).
    case user
    /// The stored session's access token when there is one (`shopctl call`, composed pages).
    case optionalUser

    /// What a method of `level` needs.
    init(_ level: AuthLevel) {
        switch level {
        case .user: self = .user
        case .optionalUser: self = .optionalUser
        case .none, .admin, .internal: self = .none
        }
    }
}

/// shopctl's calls to the gateway: each with a deadline (unless it is a watch), the stored
/// access token where the method needs one, retries where they are safe, and — when the
/// access token is refused as expired — one refresh of the session (deduplicated across
/// processes by ``SessionRefresher``) and a retry with the new token.
struct GatewayClient: Sendable {
    /// The calls' transport.
    let transport: any RawTransport
    /// The stored credentials.
    let store: CredentialsStore
    /// What refreshes the session.
    let refresher: SessionRefresher
    /// The deadline of each call (`--timeout`).
    let timeout: Duration

    /// A client whose refreshes go through `transport` too.
    init(transport: any RawTransport, store: CredentialsStore, timeout: Duration) {
        self.transport = transport
        self.store = store
        self.timeout = timeout
        refresher = SessionRefresher(store: store, renewer: GatewayRenewer(transport: transport, timeout: timeout))
    }

    /// A client with an explicit refresher (tests).
    init(transport: any RawTransport, store: CredentialsStore, refresher: SessionRefresher, timeout: Duration) {
        self.transport = transport
        self.store = store
        self.refresher = refresher
        self.timeout = timeout
    }

    /// Makes one call on `path` — again after a refresh or a retryable failure, as long as no
    /// response message was delivered yet — handing each response message to `onMessage`.
    ///
    /// `timeout` nil means no deadline (watch commands); otherwise each attempt gets it.
    func call(
        path: String, requests: [Data], authorization: CallAuthorization, metadata: Metadata = Metadata(),
        retry: CallRetry, timeout: Duration?, onMessage: (Data) async throws -> Void
    ) async throws {
        var credentials: StoredCredentials?
        if authorization != .none {
            credentials = try store.load()
            if authorization == .user && credentials == nil { throw ShopctlError.notSignedIn }
        }
        var refreshed = false
        var attempt = 1
        while true {
            var options = CallOptions(metadata: metadata, timeout: timeout)
            if let credentials {
                options.metadata.set(MetadataKey.authorization, "Bearer \(credentials.accessToken)")
            }
            var delivered = false
            do {
                try await transport.call(path: path, requests: requests, options: options) { message in
                    delivered = true
                    try await onMessage(message)
                }
                return
            } catch let error as RPCError where !delivered {
                if error.code == .unauthenticated, error.reason == AuthReason.accessTokenExpired.rawValue,
                    let stale = credentials, !refreshed
                {
                    credentials = try await refresher.refresh(after: stale.accessToken)
                    refreshed = true
                    continue
                }
                guard attempt < retry.maxAttempts, retry.isRetryable(error) else { throw error }
                try await Task.sleep(for: retry.delay(beforeRetry: attempt))
                attempt += 1
            }
        }
    }

    // MARK: Typed calls

    /// A unary call of `method`, with the default deadline.
    func unary<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request, metadata: Metadata = Metadata(),
        retry: CallRetry? = nil
    ) async throws -> Reply<Response> {
        let payload = try JSONCodec.shared.encode(request)
        let raw = try await single(
            method.info, requests: [payload], metadata: metadata, retry: retry ?? .standard(for: method.info))
        return Reply(message: try JSONCodec.shared.decode(Response.self, from: raw), raw: raw)
    }

    /// A client-streaming call of `method` sending `requests` in order.
    func clientStreaming<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ requests: [Request], metadata: Metadata = Metadata()
    ) async throws -> Reply<Response> {
        let payloads = try requests.map { request throws(RPCError) in try JSONCodec.shared.encode(request) }
        let raw = try await single(method.info, requests: payloads, metadata: metadata, retry: .never)
        return Reply(message: try JSONCodec.shared.decode(Response.self, from: raw), raw: raw)
    }

    /// A server-streaming call of `method` without a deadline, called again as `resume` says
    /// when a transient failure ends it (a restart of the gateway or of the service): `onMessage`
    /// sees each message as it arrives, except one identical to the message before it, until
    /// the stream ends OK, a final failure, or the task is cancelled. Each new call loads the
    /// stored credentials again and refreshes an expired access token, as every call does.
    func watch<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request, resume: WatchResume = WatchResume(),
        onMessage: (Reply<Response>) async throws -> Void
    ) async throws {
        let payload = try JSONCodec.shared.encode(request)
        let authorization = CallAuthorization(method.info.auth)
        try await resume.run(first: .standard(for: method.info)) { retry, deliver in
            try await call(
                path: method.path, requests: [payload], authorization: authorization, retry: retry, timeout: nil,
                onMessage: deliver)
        } onSnapshot: { raw in
            try await onMessage(Reply(message: try JSONCodec.shared.decode(Response.self, from: raw), raw: raw))
        }
    }

    /// The one response message of a unary or client-streaming call.
    private func single(
        _ info: MethodInfo, requests: [Data], metadata: Metadata, retry: CallRetry
    ) async throws -> Data {
        var messages: [Data] = []
        try await call(
            path: info.path, requests: requests, authorization: CallAuthorization(info.auth), metadata: metadata,
            retry: retry, timeout: timeout
        ) { messages.append($0) }
        guard messages.count == 1 else {
            throw RPCError(code: .internal, message: "The server sent \(messages.count) response messages instead of one.")
        }
        return messages[0]
    }
}

/// ``SessionRenewing`` through the gateway: `shop.auth.v1.AuthService/RefreshSession`.
struct GatewayRenewer: SessionRenewing {
    /// The transport to the gateway.
    let transport: any RawTransport
    /// The call's deadline.
    let timeout: Duration

    /// Calls `RefreshSession` once (it is not idempotent: the token rotates).
    func renew(refreshToken: String) async throws -> Session {
        let payload = try JSONCodec.shared.encode(RefreshSessionRequest(refreshToken: refreshToken))
        var answer: Data?
        try await transport.call(
            path: AuthContract.refreshSession.path, requests: [payload], options: CallOptions(timeout: timeout)
        ) { answer = $0 }
        guard let answer else { throw RPCError(code: .internal, message: "RefreshSession sent no session.") }
        return try JSONCodec.shared.decode(Session.self, from: answer)
    }
}
