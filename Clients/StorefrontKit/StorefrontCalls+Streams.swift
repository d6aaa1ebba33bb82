import Contracts
import Foundation
import RPC

extension StorefrontCalls {
    /// A server stream as the signed-in user, with no deadline: open until the server ends it
    /// or the task is cancelled; `body` reads its messages as they come. The access token is
    /// refreshed first when it is about to expire; a token the server refuses — as the stream
    /// opens or after messages (expired, invalid, its session revoked) — is refreshed once
    /// (the session keeper's one refresh for all waiting calls) and the stream opened again
    /// with the new one; a second refusal is thrown. A refresh the server refuses signs the
    /// user out and is thrown.
    ///
    /// - Throws: ``StorefrontError/notSignedIn`` when no one is signed in (nothing is sent);
    ///   the stream's error, as ``StorefrontError``.
    func signedInStream<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request,
        _ body: @escaping @Sendable (ResponseMessages<Response>) async throws -> Void
    ) async throws(StorefrontError) {
        do {
            guard let token = try await sessions.accessToken() else { throw StorefrontError.notSignedIn }
            do {
                try await rpc.serverStreaming(method, request, options: streamOptions(token: token), body)
            } catch let error as RPCError where Self.refreshHelps(error) {
                guard let renewed = try await sessions.accessToken(replacing: token) else { throw StorefrontError.notSignedIn }
                try await rpc.serverStreaming(method, request, options: streamOptions(token: renewed), body)
            }
        } catch {
            throw StorefrontError.converting(error)
        }
    }

    /// Whether a new access token may make `error` go away (``refreshHelps(_:)-(RPCError)``).
    static func refreshHelps(_ error: StorefrontError) -> Bool {
        error.code == .unauthenticated
            && refreshHelps(RPCError(code: .unauthenticated, reason: error.reason?.wireName, message: error.message))
    }

    /// Options with `authorization: Bearer <token>` and no deadline (a stream stays open).
    func streamOptions(token: String) -> CallOptions {
        var options = options(token: token)
        options.deadline = nil
        return options
    }
}

extension StorefrontError {
    /// What a call that needs a signed-in user ends with when no one is signed in here:
    /// `UNAUTHENTICATED` with the reason the server gives a call without a token.
    static let notSignedIn = StorefrontError(
        code: .unauthenticated, reason: .missingToken, message: "No one is signed in.")
}
