import Telemetry
import Foundation
import ServiceKit
import Storage
import RPC

/// Everything auth-svc is configured with, gathered from flags and environment by
/// `AuthCommand` (and built directly by tests).
struct AuthConfiguration: ServiceConfiguration {
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
    /// The gateway's public URL (`--public-url`), the base of the links in emails:
    /// `<linkBaseURL>/verify-email?token=…`, which the gateway's pages serve.
    var linkBaseURL = AuthConfiguration.defaultPublicURL
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
    var metrics: MetricsRegistry? = MetricsRegistry()
    var spans: (any SpanRecorder)?

    /// The gateway's address on one machine (`deploy/compose`'s default port).
    static let defaultPublicURL = "http://127.0.0.1:8080"

    /// What is wrong with `text` as the public URL (a phrase to follow the flag's name), or nil
    /// when mailed links can be built on it: an absolute `http` or `https` URL with a host, and
    /// no user, query or fragment — the link's own path and query are appended to it.
    static func problem(withPublicURL text: String) -> String? {
        guard !text.isEmpty else { return "is empty" }
        guard !text.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false }),
            let url = URLComponents(string: text)
        else { return "is not a URL" }
        // Checked first: the messages below repeat the URL.
        guard url.user == nil, url.password == nil else { return "must not carry a user or password" }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return "must start with http:// or https://, not \(text)"
        }
        guard let host = url.host, !host.isEmpty else { return "has no host: \(text)" }
        guard url.query == nil, url.fragment == nil, !text.contains("?"), !text.contains("#") else {
            return "must not have a query or fragment (links add their own): \(text)"
        }
        return nil
    }

    /// The signing key file in effect.
    var resolvedSigningKeyPath: String { signingKeyPath ?? "\(dataDirectory)/signing-key.json" }
    /// Where retired signing keys are kept: still published, so their tokens verify until they expire.
    var retiredKeysDirectory: String { "\(dataDirectory)/retired-signing-keys" }
    /// Where mail goes without SMTP.
    var mailDirectory: String { "\(dataDirectory)/mail" }
    /// The database file.
    var databasePath: String { "\(dataDirectory)/auth.sqlite" }
    /// The PostgreSQL database (`--database-url`) whose schema `auth` holds the data; nil
    /// keeps it in ``databasePath``.
    var databaseURL: String?
    /// The PostgreSQL password, when it is not left to libpq (`PGPASSWORD`, `~/.pgpass`).
    var databasePassword: String?

    /// Where the data is: the schema `auth` of ``databaseURL``, else ``databasePath``.
    var databaseLocation: DatabaseLocation {
        DatabaseLocation(url: databaseURL, password: databasePassword, schema: "auth", sqlitePath: databasePath)
    }
}
