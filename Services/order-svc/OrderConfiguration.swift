import Telemetry
import ServiceKit
import Storage
import RPC

/// Everything order-svc is configured with, gathered from flags and environment by
/// `OrderCommand` (and built directly by tests).
struct OrderConfiguration: ServiceConfiguration {
    /// Address and port to listen on; port 0 picks a free one.
    var host = "127.0.0.1", port = 7004
    /// The data directory: `order.sqlite` and, when generated, the keys.
    var dataDirectory: String
    /// How to reach auth-svc, and the issuer and audience of its tokens.
    var auth: AuthLinkOptions
    /// catalog-svc and basket-svc.
    var catalogTarget: UpstreamTarget, basketTarget: UpstreamTarget
    /// How long in-flight calls get to finish on shutdown.
    var gracePeriod: Duration = .seconds(10)
    /// The deadline of calls without one and the bounds on unread answers (``ServerLimits``).
    var serverLimits = ServerLimits()
    var metrics: MetricsRegistry? = MetricsRegistry()
    var spans: (any SpanRecorder)?

    /// The database file.
    var databasePath: String { "\(dataDirectory)/order.sqlite" }
    /// The PostgreSQL database (`--database-url`) whose schema `orders` holds the data; nil
    /// keeps it in ``databasePath``.
    var databaseURL: String?
    /// The PostgreSQL password, when it is not left to libpq (`PGPASSWORD`, `~/.pgpass`).
    var databasePassword: String?

    /// Where the data is: the schema `orders` of ``databaseURL``, else ``databasePath``.
    var databaseLocation: DatabaseLocation {
        DatabaseLocation(url: databaseURL, password: databasePassword, schema: "orders", sqlitePath: databasePath)
    }
}
