import Contracts
import Credentials
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RPC
import ServiceKit

/// How one identity provider (Google, Apple) is configured: the client ids its tokens must be
/// for, the issuers they may come from, and where its JWK Set is.
struct ProviderConfiguration: Sendable {
    /// The provider.
    var provider: IdentityProvider
    /// Accepted `aud` values: this app's client ids at the provider.
    var clientIDs: Set<String>
    /// Accepted `iss` values.
    var issuers: Set<String>
    /// The spelling of `iss` identities are stored under, whichever the token used: one
    /// provider account is one identity (Google writes its issuer two ways).
    var canonicalIssuer: String
    /// A file path or an `http(s)://` URL of the provider's JWK Set.
    var jwks: String

    /// Google: `iss` is either spelling Google documents.
    static func google(clientIDs: Set<String>, jwks: String) -> ProviderConfiguration {
        ProviderConfiguration(
            provider: .google, clientIDs: clientIDs, issuers: ["https://accounts.google.com", "accounts.google.com"],
            canonicalIssuer: "https://accounts.google.com", jwks: jwks)
    }

    /// Apple.
    static func apple(clientIDs: Set<String>, jwks: String) -> ProviderConfiguration {
        ProviderConfiguration(
            provider: .apple, clientIDs: clientIDs, issuers: ["https://appleid.apple.com"],
            canonicalIssuer: "https://appleid.apple.com", jwks: jwks)
    }

    /// The key source reading `jwks`: the file on every fetch (so a replaced file is picked
    /// up on the next unknown `kid`), or the URL with a 10-second timeout.
    var keySource: KeySource {
        let location = jwks
        if let url = URL(string: location), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" {
            return KeySource {
                var request = URLRequest(url: url, timeoutInterval: 10)
                request.setValue("application/json", forHTTPHeaderField: "accept")
                let (data, response) = try await URLSession.shared.data(for: request)
                if let http = response as? HTTPURLResponse, http.statusCode != 200 {
                    throw ProviderKeysError(location: location, problem: "HTTP status \(http.statusCode)")
                }
                return try JWKSet(jsonData: data)
            }
        }
        return KeySource {
            let data = try Data(contentsOf: URL(fileURLWithPath: location))
            return try JWKSet(jsonData: data)
        }
    }
}

/// A provider's JWK Set could not be had.
struct ProviderKeysError: Error, CustomStringConvertible {
    /// The file or URL.
    var location: String
    /// What went wrong.
    var problem: String

    var description: String { "JWK Set at \(location): \(problem)" }
}

/// Verifies ID tokens of the configured providers: RS256 against the provider's keys (cached
/// by `kid`, refetched on an unknown one), `iss`, `aud`, `exp`, and for Apple the nonce.
///
/// Thread-safe.
struct IdentityProviders: Sendable {
    private let verifiers: [IdentityProvider: (verifier: CachedJWTVerifier, canonicalIssuer: String)]

    /// Verifiers for each configured provider; any other provider is unsupported.
    init(_ configurations: [ProviderConfiguration]) {
        var verifiers: [IdentityProvider: (verifier: CachedJWTVerifier, canonicalIssuer: String)] = [:]
        for configuration in configurations where configuration.provider == .google || configuration.provider == .apple {
            let verifier = CachedJWTVerifier(source: configuration.keySource) { keys in
                JWTVerifier.idTokens(keys: keys, issuers: configuration.issuers, audiences: configuration.clientIDs)
            }
            verifiers[configuration.provider] = (verifier, configuration.canonicalIssuer)
        }
        self.verifiers = verifiers
    }

    /// The providers sign-in works with.
    var configured: Set<IdentityProvider> { Set(verifiers.keys) }

    /// The claims of a valid ID token of `provider`, its issuer in the provider's canonical spelling.
    ///
    /// - Throws: UNIMPLEMENTED `UNSUPPORTED_PROVIDER` for a provider not configured;
    ///   UNAUTHENTICATED `INVALID_CREDENTIAL` for a token that fails any check (the detail is
    ///   in the error's cause, for logs); UNAVAILABLE when the provider's keys cannot be had.
    func verify(provider: IdentityProvider, idToken: String, rawNonce: String?) async throws -> IDTokenClaims {
        guard let (verifier, canonicalIssuer) = verifiers[provider] else {
            throw AuthError.unsupportedProvider(provider: provider.rawValue).rpcError
        }
        var claims: IDTokenClaims
        do {
            claims = try await verifier.verify(idToken, as: IDTokenClaims.self)
        } catch .token(let error) {
            throw AuthError.invalidIDToken.rpcError.causedBy(error)
        } catch .keysUnavailable(let cause) {
            throw AuthError.providerKeysUnavailable(provider: provider.rawValue).rpcError.causedBy(cause)
        }
        if provider == .apple, !AppleNonce.isSatisfied(by: claims, rawNonce: rawNonce) {
            throw AuthError.nonceMismatch.rpcError
        }
        claims.issuer = canonicalIssuer
        return claims
    }
}
