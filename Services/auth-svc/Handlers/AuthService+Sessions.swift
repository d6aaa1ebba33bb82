import Logging
import Contracts
import Credentials
import RPC
import ServiceKit

/// Sessions: sign-in with a password or an ID token, refresh, sign-out, the auth-state stream,
/// and what other services need to verify tokens (keys and the revocation feed).
extension AuthService {
    /// `SignIn`: a session for a verified account whose password matches.
    func signIn(_ request: SignInRequest, context: ServerContext) async throws -> Session {
        guard request.email.utf8.count <= InputRules.maximumEmailLength else {
            throw RequestField.email.invalid("must be at most \(InputRules.maximumEmailLength) bytes")
        }
        guard request.password.utf8.count <= InputRules.maximumPasswordBytes else {
            throw RequestField.password.invalid("must be at most 256 characters")
        }
        let email = InputRules.normalizedEmail(request.email)
        let account = email ?? request.email.lowercased()
        let address = clientAddress(context)
        var user: UserRecord?
        switch try await throttle.attempt(account: account, address: address, giveUpAt: throttleGiveUp(context), check: {
            user = try await email.asyncFlatMap { try await store.user(email: $0) }
            return try await checkPassword(request.password, user: user, account: account, context: context) && user != nil
        }) {
        case .refused:
            throw AuthError.tooManyAttempts
        case .failed:
            throw AuthError.wrongEmailOrPassword
        case .passed:
            break
        }
        guard let user else { throw AuthError.wrongEmailOrPassword }
        guard user.emailVerified else {
            try await sendVerification(to: user)
            throw AuthError.emailNotVerified
        }
        return try await startSession(for: user, method: "password")
    }

    /// `SignInWithIdToken`: a session for the account of a Google or Apple identity, created
    /// or linked as needed.
    func signInWithIdToken(_ request: SignInWithIdTokenRequest, context: ServerContext) async throws -> Session {
        guard providers.configured.contains(request.provider) else {
            throw AuthError.unsupportedProvider(provider: request.provider.rawValue)
        }
        guard request.idToken.utf8.count <= InputRules.maximumIDTokenLength else {
            throw RequestField.idToken.invalid("must be at most \(InputRules.maximumIDTokenLength) bytes")
        }
        if let nonce = request.rawNonce, nonce.utf8.count > InputRules.maximumTokenLength {
            throw RequestField.rawNonce.invalid("must be at most \(InputRules.maximumTokenLength) bytes")
        }
        let claims = try await providers.verify(
            provider: request.provider, idToken: request.idToken, rawNonce: request.rawNonce)
        let email = claims.email.flatMap(InputRules.normalizedEmail) ?? ""
        let user: UserRecord
        do {
            let revoked: [String]
            (user, revoked) = try await store.userForIdentity(
                provider: request.provider.rawValue, issuer: claims.issuer, subject: claims.subject, email: email,
                emailVerified: claims.emailVerified == true)
            announceRevoked(revoked)
        } catch AuthStore.Conflict.emailInUse {
            throw AuthError.emailInUseByPasswordAccount
        }
        return try await startSession(for: user, method: request.provider.rawValue)
    }

    /// `RefreshSession`: rotates the refresh token; a rotated one presented again revokes the
    /// whole session.
    func refreshSession(_ request: RefreshSessionRequest, context: ServerContext) async throws -> Session {
        guard !request.refreshToken.isEmpty, request.refreshToken.utf8.count <= InputRules.maximumTokenLength else {
            throw AuthError.malformedRefreshToken
        }
        let refresh = sessions.newRefreshToken()
        switch try await store.rotateRefreshToken(hash: OpaqueToken.hash(request.refreshToken), newHash: refresh.hash) {
        case .rotated(let session, let user):
            return try sessions.session(for: user, sessionID: session.id, refreshToken: refresh.token)
        case .reused(let sessionID):
            announceRevoked([sessionID])
            context.logger.warning("refresh token reused; session revoked", metadata: ["session": "\(sessionID)"])
            throw AuthError.refreshTokenReused
        case .invalid:
            throw AuthError.invalidRefreshToken
        }
    }

    /// `SignOut`: revokes this session (`local`) or every session of the user (`global`).
    func signOut(_ request: SignOutRequest, context: ServerContext) async throws -> Empty {
        let caller = try context.requireUser()
        switch request.scope {
        case .global:
            announceRevoked(try await store.revokeSessions(userID: caller.id, reason: "signed out everywhere"))
        case .local:
            if try await store.revokeSession(id: caller.sessionID, reason: "signed out") {
                announceRevoked([caller.sessionID])
            }
        }
        return Empty()
    }

    /// `WatchAuthState`: `SIGNED_IN` with the user now, then `SIGNED_OUT` when this session is
    /// revoked, and the stream ends.
    func watchAuthState(
        _ request: Empty, writer: ResponseWriter<WatchAuthStateResponse>, context: ServerContext
    ) async throws {
        let caller = try context.requireUser()
        // Listen before looking, so a revocation between the two is not missed.
        let revocation = events.revocation(of: caller.sessionID)
        guard let session = try await store.session(id: caller.sessionID), session.revokedAt == nil,
            let user = try await store.user(id: caller.id)
        else {
            try await writer.write(WatchAuthStateResponse(state: .signedOut))
            return
        }
        try await writer.write(WatchAuthStateResponse(state: .signedIn, user: user.message))
        for await _ in revocation { break }
        try Task.checkCancellation()
        try await writer.write(WatchAuthStateResponse(state: .signedOut))
    }

    /// `GetJwks`: the public keys that verify access tokens.
    func getJwks(_ request: Empty, context: ServerContext) async throws -> GetJwksResponse {
        GetJwksResponse(keys: publishedKeys)
    }

    /// `SessionRevocationService/ListRevokedSessions`: the feed other services poll.
    func listRevokedSessions(
        _ request: ListRevokedSessionsRequest, context: ServerContext
    ) async throws -> ListRevokedSessionsResponse {
        guard request.afterSequence >= 0 else {
            throw RequestField.afterSequence.invalid("must not be negative")
        }
        let (revocations, last) = try await store.revocations(after: Int64(request.afterSequence))
        return ListRevokedSessionsResponse(
            revocations: revocations.map {
                SessionRevocation(sessionId: $0.sessionID, revokedAt: Timestamp.rfc3339($0.revokedAt))
            },
            lastSequence: Int(last))
    }
}

extension Optional {
    /// The async counterpart of `flatMap`.
    func asyncFlatMap<U>(_ transform: (Wrapped) async throws -> U?) async rethrows -> U? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
