import Telemetry
import ServiceKit
import Storage
import RPC

/// Everything basket-svc is configured with, gathered from flags and environment by
/// `BasketCommand` (and built directly by tests).
struct BasketConfiguration: ServiceConfiguration {
    /// Address to listen on.
    var host = "127.0.0.1"
    /// Port to listen on; 0 picks a free one.
    var port = 7003
    /// The data directory: `basket.sqlite` and, when generated, the internal API key.
    var dataDirectory: String
    /// Where auth-svc is: its keys verify access tokens, its feed reports revoked sessions.
    var authTarget = UpstreamTarget(host: "127.0.0.1", port: 7001)
    /// The `iss` access tokens must carry.
    var authIssuer = "storefront-auth"
    /// The `aud` access tokens must carry.
    var authAudience = "storefront"
    /// Where catalog-svc is.
    var catalogTarget = UpstreamTarget(host: "127.0.0.1", port: 7002)
    /// The longest a catalog call may take, whatever the caller's deadline.
    var catalogTimeout: Duration = .seconds(2)
    /// The internal API key (auth-svc's revocation feed); nil resolves it from the environment
    /// or the data directory.
    var internalKey: String?
    /// How long in-flight calls get to finish on shutdown.
    var gracePeriod: Duration = .seconds(10)
    /// The deadline of calls without one and the bounds on unread answers (``ServerLimits``).
    var serverLimits = ServerLimits()
    var metrics: MetricsRegistry? = MetricsRegistry()
    var spans: (any SpanRecorder)?

    /// The database file.
    var databasePath: String { "\(dataDirectory)/basket.sqlite" }
    /// The PostgreSQL database (`--database-url`) whose schema `basket` holds the data; nil
    /// keeps it in ``databasePath``.
    var databaseURL: String?
    /// The PostgreSQL password, when it is not left to libpq (`PGPASSWORD`, `~/.pgpass`).
    var databasePassword: String?

    /// Where the data is: the schema `basket` of ``databaseURL``, else ``databasePath``.
    var databaseLocation: DatabaseLocation {
        DatabaseLocation(url: databaseURL, password: databasePassword, schema: "basket", sqlitePath: databasePath)
    }
}
