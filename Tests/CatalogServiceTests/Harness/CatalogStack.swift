import Foundation
import InProcessServices
import RPCHTTP2
import ServiceTestSupport
import Testing
import RPC

/// The stack catalog-svc's tests run against: auth-svc, and catalog-svc pointed at it.
typealias CatalogStack = ServiceStack

/// Runs `body` against a fresh auth-svc and catalog-svc built in this process
/// (``withInProcessStack(_:options:_:)``); `seeded: false` starts an empty catalog, as
/// `--no-seed` does. On PostgreSQL it holds one of ``catalogStackSlots`` meanwhile.
@discardableResult
func withCatalogService<Result>(seeded: Bool = true, _ body: (CatalogStack) async throws -> Result) async throws -> Result {
    let options = InProcessOptions(seedCatalog: seeded)
    guard TestBackend.isPostgreSQL else { return try await withInProcessStack([.auth, .catalog], options: options, body) }
    return try await catalogStackSlots.withSlots { try await withInProcessStack([.auth, .catalog], options: options, body) }
}

/// Bounds how many in-process stacks of these suites run at once on PostgreSQL: each service
/// holds a pool of connections (`DatabaseOptions.postgreSQLConnectionCount`) to the test
/// process's shared server, and every test starting at once would open more than its
/// `max_connections` allows. (In-process stacks take no ``serviceProcessSlots``.)
let catalogStackSlots = ConcurrencySlots(limit: 8)

/// Runs `body` against a fresh auth-svc and catalog-svc as processes (``withServiceStack``):
/// for what only a process shows (a restart, a crash, its flags and environment).
///
/// `seeded: .emptyByFlag` or `.emptyByEnvironment` starts an empty catalog, with `--no-seed` or
/// `SHOP_CATALOG_NO_SEED=1`.
@discardableResult
func withLiveCatalogService<Result>(
    seeded: CatalogSeeding = .builtIn, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (CatalogStack) async throws -> Result
) async throws -> Result {
    try await withServiceStack(
        [.auth, .catalog], extraArguments: seeded == .emptyByFlag ? [.catalog: ["--no-seed"]] : [:],
        environment: seeded == .emptyByEnvironment ? [.catalog: ["SHOP_CATALOG_NO_SEED": "1"]] : [:],
        sourceLocation: sourceLocation, body)
}

extension CatalogStack {
    /// A client of auth-svc.
    var authClient: RPCClient { get throws { try client(.auth) } }
    /// A client of catalog-svc, the service under test.
    var catalogClient: RPCClient { get throws { try client(.catalog) } }
    /// catalog-svc's process.
    var catalog: ServiceProcess { get throws { try service(.catalog) } }
    /// auth-svc's data directory; its `mail/` holds the delivered emails.
    var authDataDirectory: URL { dataDirectory(.auth) }
    /// catalog-svc's data directory.
    var catalogDataDirectory: URL { dataDirectory(.catalog) }

    /// Stops catalog-svc (SIGTERM, or SIGKILL when `crashing`) and starts it again on the same
    /// data directory; returns the exit status of the stopped process (nil when it was killed).
    @discardableResult
    func restartCatalog(crashing: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int32? {
        try await restart(.catalog, crashing: crashing, sourceLocation: sourceLocation)
    }
}

/// Whether catalog-svc starts with the built-in catalog, and how it is told not to.
enum CatalogSeeding: Sendable, CustomStringConvertible {
    case builtIn, emptyByFlag, emptyByEnvironment

    var description: String {
        switch self {
        case .builtIn: "built-in catalog"
        case .emptyByFlag: "--no-seed"
        case .emptyByEnvironment: "SHOP_CATALOG_NO_SEED=1"
        }
    }
}
