import Credentials
import Foundation
import Logging
import RPC
@testable import ServiceKit
import Synchronization

/// The issuer and audience every test token and verifier agree on, unless a test says not.
enum AuthFixture {
    static let issuer = "https://auth.storefront.test"
    static let audience = "storefront"

    /// A fresh Ed25519 signing key, under `kid` when one is given (e.g. to sign with a
    /// different key under a kid the verifier knows); a failure to make one fails the test.
    static func makeKey(kid: String? = nil) throws -> SigningKey {
        guard let kid else { return try SigningKey.generate() }
        let seed = Data((0..<32).map { _ in UInt8.random(in: .min ... .max) })
        return try SigningKey(algorithm: .edDSA, privateKey: seed, kid: kid)
    }

    /// An access token for user "user-1" signed with `key`.
    static func token(
        signedWith key: SigningKey, issuer: String = AuthFixture.issuer, audience: String = AuthFixture.audience,
        issuedAt: Date = Date()
    ) throws -> String {
        let claims = AccessTokenClaims(
            issuer: issuer, subject: "user-1", audience: audience, sessionID: "session-1",
            email: "ada@example.com", emailVerified: true, issuedAt: issuedAt)
        return try JWTSigner(key: key).sign(claims)
    }

    /// A context for a call of a method with `auth`, carrying `metadata`.
    static func context(auth: AuthLevel, metadata: Metadata = Metadata()) -> ServerContext {
        let method = MethodInfo(
            service: "test.auth.v1.Probe", method: "Call", kind: .unary, auth: auth, idempotent: false,
            requestFields: [], responseFields: [])
        return ServerContext(
            method: method, metadata: metadata, deadline: nil, requestID: "test", peer: "127.0.0.1:1",
            logger: Logger(label: "servicekit-tests"))
    }
}

/// A key source whose published keys a test can swap, counting how often it is asked; or
/// failing, when `failing` is set. Thread-safe via a `Mutex`.
final class FakeKeySource: Sendable {
    private struct State {
        var keys: JWKSet
        var fetches = 0
        var failing = false
    }
    private let state: Mutex<State>

    /// A source publishing the public halves of `keys`.
    init(publishing keys: [SigningKey]) {
        state = Mutex(State(keys: JWKSet(keys: keys.map(\.publicJWK))))
    }

    /// How many fetches the verifier made.
    var fetches: Int { state.withLock { $0.fetches } }

    /// Publishes the public halves of `keys` from now on.
    func publish(_ keys: [SigningKey]) {
        state.withLock { $0.keys = JWKSet(keys: keys.map(\.publicJWK)) }
    }

    /// Makes every later fetch fail (or succeed again).
    func setFailing(_ failing: Bool) {
        state.withLock { $0.failing = failing }
    }

    /// The source the verifier under test uses.
    var source: KeySource {
        KeySource { [self] in
            try state.withLock { state in
                state.fetches += 1
                if state.failing { throw URLError(.cannotConnectToHost) }
                return state.keys
            }
        }
    }

    /// A verifier over this source with the fixture's issuer and audience.
    func makeVerifier(refetchInterval: Duration = .seconds(30), keyMaxAge: Duration = .seconds(600)) -> AccessTokenVerifier {
        AccessTokenVerifier(
            issuer: AuthFixture.issuer, audience: AuthFixture.audience, source: source,
            refetchInterval: refetchInterval, keyMaxAge: keyMaxAge)
    }
}

/// The reason of the `RPCError` `body` throws, or nil if it throws something else or nothing.
func rpcReason(_ body: () async throws -> Void) async -> (code: RPCCode, reason: String?)? {
    do {
        try await body()
        return nil
    } catch let error as RPCError {
        return (error.code, error.reason)
    } catch {
        return nil
    }
}
