import Contracts
import Foundation
import RPC

/// How the surfaces (``StorefrontAuth`` and those to come) make their calls: anonymous ones,
/// and signed-in ones carrying the access token — refreshed first when it is about to expire,
/// and once more when the server refuses it as expired, invalid or revoked (the session
/// keeper makes one refresh for all calls waiting on it). Every error leaves as
/// ``StorefrontError``.
struct StorefrontCalls: Sendable {
    /// The typed client over the Connect transport.
    let rpc: RPCClient
    /// The session and its refresh.
    let sessions: SessionKeeper
    /// The deadline of each call.
    let requestTimeout: Duration

    /// A call that needs no user.
    func anonymous<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request
    ) async throws(StorefrontError) -> Response {
        do {
            return try await rpc.unary(method, request, options: options(token: nil))
        } catch {
            throw StorefrontError.converting(error)
        }
    }

    /// A call as the signed-in user (without a token when signed out: the server then answers
    /// `UNAUTHENTICATED`/`MISSING_TOKEN`), retried once with a new token when the server
    /// refused the one it carried. `metadata` goes with every attempt, the retries' included
    /// (an `idempotency-key` stays the same).
    func signedIn<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request, metadata: Metadata = Metadata()
    ) async throws(StorefrontError) -> Response {
        do {
            let token = try await sessions.accessToken()
            do {
                return try await rpc.unary(method, request, options: options(token: token, metadata: metadata))
            } catch let error as RPCError where token != nil && Self.refreshHelps(error) {
                let renewed = try await sessions.accessToken(replacing: token!)
                return try await rpc.unary(method, request, options: options(token: renewed, metadata: metadata))
            }
        } catch {
            throw StorefrontError.converting(error)
        }
    }

    /// Whether a new access token may make `error` go away: the token expired, was not
    /// valid (a key rotated), or its session was revoked (then the refresh fails too, and
    /// signs the user out).
    static func refreshHelps(_ error: RPCError) -> Bool {
        error.code == .unauthenticated
            && ["ACCESS_TOKEN_EXPIRED", "INVALID_ACCESS_TOKEN", "SESSION_REVOKED"].contains(error.reason ?? "")
    }

    /// Options with the deadline, `metadata` and, when given, `authorization: Bearer <token>`.
    func options(token: String?, metadata: Metadata = Metadata()) -> CallOptions {
        var metadata = metadata
        if let token { metadata.add(MetadataKey.authorization, "Bearer \(token)") }
        return CallOptions(metadata: metadata, timeout: requestTimeout)
    }
}
