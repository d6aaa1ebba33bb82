import Contracts
import Foundation
import RPC

extension StorefrontCalls {
    /// A server stream as the signed-in user, with no deadline: open until the server ends it
    /// or the task is cancelled; `body` reads its messages as they come (it runs once per
    /// stream opened). The access token is refreshed first when it is about to expire; a token
    /// the server refuses (expired, invalid, its session revoked) is refreshed — the session
    /// keeper's one refresh for all waiting calls — and the stream opened again with the new
    /// one. A refusal of a refreshed token is thrown unless the stream had made progress since
    /// the last refusal (`madeProgress`, asked at each refusal: it delivered messages, so the
    /// token worked until it expired on the way). A refresh the server refuses signs the user
    /// out and is thrown.
    ///
    /// - Throws: ``StorefrontError/notSignedIn`` when no one is signed in (nothing is sent);
    ///   the stream's error, as ``StorefrontError``.
    func signedInStream<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request,
        madeProgress: @escaping @Sendable () -> Bool = { false },
        _ body: @escaping @Sendable (ResponseMessages<Response>) async throws -> Void
    ) async throws(StorefrontError) {
        do {
            guard var token = try await sessions.accessToken() else { throw StorefrontError.notSignedIn }
            var refreshed = false
            while true {
                do {
                    return try await rpc.serverStreaming(method, request, options: streamOptions(token: token), body)
                } catch let error as RPCError where Self.refreshHelps(error) && (madeProgress() || !refreshed) {
                    guard let renewed = try await sessions.accessToken(replacing: token) else { throw StorefrontError.notSignedIn }
                    token = renewed
                    refreshed = true
                }
            }
        } catch {
            throw StorefrontError.converting(error)
        }
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
