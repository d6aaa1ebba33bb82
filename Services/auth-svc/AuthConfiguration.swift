import Foundation
import RPCHTTP2
import ServiceKit

/// Everything auth-svc is configured with, gathered from flags and environment by
/// `AuthServiceCommand` (and built directly by tests).
struct AuthConfiguration: Sendable {
    /// Address to listen on.
    var host = "127.0.0.1"
    /// Port to listen on; 0 picks a free one.
    var port = 7001
    /// The data directory: `auth.sqlite`, the signing key, the mail directory.
    var dataDirectory: String
    /// The `iss` of access tokens.
    var issuer = "storefront-auth"
    /// The `aud` of access tokens.
    var audience = "storefront"
    /// The signing key file; `<data-dir>/signing-key.json` when nil.
    var signingKeyPath: String?
    /// The SMTP server; nil writes `.eml` files into `<data-dir>/mail`.
    var smtp: SocketAddressText?
    /// The `From` of every email.
    var mailFrom = "Storefront <no-reply@storefront.local>"
    /// The base of the links in emails.
    var linkBaseURL = "http://127.0.0.1:8080"
    /// Google and Apple sign-in, when configured.
    var providers: [ProviderConfiguration] = []
    /// Threads that hash passwords.
    var hashThreads = ProcessInfo.processInfo.activeProcessorCount
    /// How password hashing is admitted: queue bounds per client and in all, the longest wait.
    var hashLimits = HashScheduler.Limits()
    /// scrypt's cost exponent (N = 2^logN).
    var scryptLogN = 17
    /// The internal API key; nil resolves it from the environment or the data directory.
    var internalKey: String?
    /// How long in-flight calls get to finish on shutdown.
    var gracePeriod: Duration = .seconds(10)
    /// The deadline of calls without one and the bounds on unread answers (``ServerLimits``).
    var serverLimits = ServerLimits()

    /// The signing key file in effect.
    var resolvedSigningKeyPath: String { signingKeyPath ?? "\(dataDirectory)/signing-key.json" }
    /// Where retired signing keys are kept: still published, so their tokens verify until they expire.
    var retiredKeysDirectory: String { "\(dataDirectory)/retired-signing-keys" }
    /// Where mail goes without SMTP.
    var mailDirectory: String { "\(dataDirectory)/mail" }
    /// The database file.
    var databasePath: String { "\(dataDirectory)/auth.sqlite" }
}
