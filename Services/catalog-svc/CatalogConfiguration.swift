import RPC
import Telemetry
import ServiceKit
import Storage

/// Everything catalog-svc is configured with, gathered from flags and environment by
/// `CatalogCommand` (and built directly by tests).
struct CatalogConfiguration: ServiceConfiguration {
    /// Address and port to listen on; port 0 picks a free one.
    var host = "127.0.0.1", port = 7002
    /// The data directory: `catalog.sqlite` and, when generated, the keys.
    var dataDirectory: String
    /// How to reach auth-svc, and the issuer and audience of its tokens.
    var auth: AuthLinkOptions
    /// Whether to load the seed catalog on the first start.
    var seed = true
    /// Whether to keep the answers of repeated reads in memory (`CatalogAnswerCache`; SQLite only).
    var keepsAnswers = true
    /// How long in-flight calls get to finish on shutdown.
    var gracePeriod: Duration = .seconds(10)
    /// The deadline of calls without one and the bounds on unread answers (``ServerLimits``).
    var serverLimits = ServerLimits()
    var metrics: MetricsRegistry? = MetricsRegistry()
    var spans: (any SpanRecorder)?

    /// The database file.
    var databasePath: String { "\(dataDirectory)/catalog.sqlite" }
    /// The PostgreSQL database (`--database-url`) whose schema `catalog` holds the data; nil
    /// keeps it in ``databasePath``.
    var databaseURL: String?
    /// The PostgreSQL password, when it is not left to libpq (`PGPASSWORD`, `~/.pgpass`).
    var databasePassword: String?

    /// Where the data is: the schema `catalog` of ``databaseURL``, else ``databasePath``.
    var databaseLocation: DatabaseLocation {
        DatabaseLocation(url: databaseURL, password: databasePassword, schema: "catalog", sqlitePath: databasePath)
    }
}
