#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// How a ``StorefrontClient`` calls: its timeouts, the `URLSession` settings, where the session
/// is kept, and who sees each request. A value; change a copy before making the client.
public struct StorefrontConfiguration: Sendable {
    /// The deadline of each call (sent as `connect-timeout-ms`, kept here too).
    public var requestTimeout: Duration = .seconds(30)
    /// How long a stream (a watch) may stay silent before it counts as lost.
    public var streamIdleTimeout: Duration = .seconds(3600)
    /// The settings of the client's own `URLSession` (proxies, TLS, cellular access, extra
    /// headers). The client makes the session itself: it must be its delegate to read a
    /// stream as it arrives, which a task's own delegate cannot do on Linux.
    public var sessionConfiguration: URLSessionConfiguration = .default
    /// Where the signed-in session is kept between launches.
    public var credentialStore: any CredentialStore = StorefrontConfiguration.platformCredentialStore()
    /// What sees each request before it is sent (headers, logging), in order.
    public var interceptors: [any RequestInterceptor] = []
    /// How long before its expiry an access token is refreshed (calls then never arrive with
    /// a token that lapsed on the way).
    public var refreshMargin: Duration = .seconds(60)

    /// The defaults: a 30-second deadline, the platform's credential store, no interceptors.
    public init() {}

    /// The Keychain on Apple platforms (the app's bundle identifier as the service); elsewhere
    /// `~/.config/storefront-kit/session.json`, readable only by its owner.
    public static func platformCredentialStore() -> any CredentialStore {
        #if canImport(Security)
        KeychainCredentialStore(service: Bundle.main.bundleIdentifier ?? "StorefrontKit")
        #else
        FileCredentialStore(
            file: FileManager.default.homeDirectoryForCurrentUser
                .appendingPathComponent(".config/storefront-kit/session.json"))
        #endif
    }
}
