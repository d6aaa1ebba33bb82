import ContractTesting
import Contracts
import RPC

/// What every service expects of auth-svc through `ServiceKit` (`AuthServiceLink`): the keys
/// that verify access tokens (`GetJwks`, through `CachedJWTVerifier`) and the revocation feed
/// (`ListRevokedSessions`, through `RevocationFeed`). Each service has its own contract with
/// these interactions, since each is a consumer of its own.
enum AuthInteractions {
    /// The revoked session of the provider state "a session was revoked", as the mock reports it.
    static let revokedSessionID = "6c0e9a52-7d1b-4f0e-a1c3-5b8e2d4f7a90"

    /// GetJwks: the mock publishes the contract tests' fixed key, so the consumer accepts the
    /// tokens the tests mint; the provider's own key must have the same shape.
    static func getJwks() throws -> InteractionSpec {
        InteractionSpec(
            "GetJwks", given: [ProviderState("auth-svc signs access tokens")], path: AuthContract.getJwks.path,
            response: try .message(
                encoding: GetJwksResponse(keys: [try TestAuthority.publishedKey()]),
                rules: [
                    "$": Matcher.type.allowingExtraFields, "$.keys": .type(minItems: 1),
                    "$.keys[*].kty": .equality, "$.keys[*].alg": .equality, "$.keys[*].crv": .equality,
                    "$.keys[*].x": .regex(Matcher.Pattern.base64URL),
                ]))
    }

    /// The internal key the feed presents: any non-empty value.
    static let feedMetadata: [String: Matcher] = [MetadataKey.apiKey: .regex(Matcher.Pattern.nonEmpty)]
    /// The provider fills the key in with its own.
    static let feedGenerators = Generators(metadata: [MetadataKey.apiKey: "${internalKey}"])

    /// The feed's first poll: every revocation so far.
    static func revocationsFromStart() throws -> InteractionSpec {
        InteractionSpec(
            "ListRevokedSessions from the start", given: [ProviderState("a session was revoked")],
            path: SessionRevocationContract.listRevokedSessions.path, metadata: feedMetadata, generators: feedGenerators,
            response: try .message(
                encoding: ListRevokedSessionsResponse(
                    revocations: [SessionRevocation(sessionId: revokedSessionID, revokedAt: "2026-11-22T01:41:17Z")],
                    lastSequence: 1),
                rules: [
                    "$": Matcher.type.allowingExtraFields, "$.revocations": .type(minItems: 1),
                    "$.revocations[*].revokedAt": .regex(Matcher.Pattern.timestamp), "$.lastSequence": .integer,
                ]))
    }

    /// The feed's next poll, after the last sequence number seen: nothing new.
    static func revocationsAfterLast() throws -> InteractionSpec {
        InteractionSpec(
            "ListRevokedSessions after the last one seen", given: [ProviderState("a session was revoked")],
            path: SessionRevocationContract.listRevokedSessions.path, metadata: feedMetadata, generators: feedGenerators,
            response: try .message(
                encoding: ListRevokedSessionsResponse(revocations: [], lastSequence: 1),
                rules: ["$": Matcher.type.allowingExtraFields, "$.revocations": .equality, "$.lastSequence": .equality]))
    }

    /// A service's contract with auth-svc.
    static func all() throws -> [InteractionSpec] {
        [try getJwks(), try revocationsFromStart(), try revocationsAfterLast()]
    }
}
