import Credentials
import Foundation
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

/// Bounds how many service pairs run at once: two cores, two processes per pair.
let pairSlots = ConcurrencySlots(limit: 3)

/// Runs `body` against a fresh pair of real processes — `auth-svc`, and `catalog-svc` pointed
/// at it — each with its own data directory under one temporary root; then stops both and
/// removes the root, whether `body` succeeded or not.
///
/// `seeded: .emptyByFlag` or `.emptyByEnvironment` starts an empty catalog, with `--no-seed` or
/// `SHOP_CATALOG_NO_SEED=1`. At most
/// three pairs run at once (``pairSlots``).
@discardableResult
func withCatalogService<Result>(
    seeded: CatalogSeeding = .builtIn, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (CatalogStack) async throws -> Result
) async throws -> Result {
    try await pairSlots.run(
        launch: { try await CatalogStack.launch(seeded: seeded, sourceLocation: sourceLocation) },
        report: { stack, error in "\(error)\n\(stack.logTails())\n" },
        shutDown: { await $0.shutDown() }, body)
}

/// A running auth-svc and catalog-svc, the keys they share and the key auth-svc signs with.
///
/// Thread-safe: the catalog process, which ``restartCatalog()`` replaces, lives in a `Mutex`;
/// everything else is immutable and `Sendable`.
final class CatalogStack: Sendable {
    /// The temporary root holding both data directories.
    let root: URL
    /// auth-svc.
    let auth: ServiceProcess
    /// `SHOP_ADMIN_API_KEY` of catalog-svc.
    let adminKey: String
    /// `SHOP_INTERNAL_API_KEY` of both services.
    let internalKey: String
    /// The key auth-svc signs access tokens with (`--signing-key`), so tests can mint tokens.
    let signingKey: SigningKey
    private let seeded: CatalogSeeding
    private let currentCatalog: Mutex<ServiceProcess>

    private init(
        root: URL, auth: ServiceProcess, catalog: ServiceProcess, adminKey: String, internalKey: String,
        signingKey: SigningKey, seeded: CatalogSeeding
    ) {
        self.root = root
        self.auth = auth
        self.adminKey = adminKey
        self.internalKey = internalKey
        self.signingKey = signingKey
        self.seeded = seeded
        currentCatalog = Mutex(catalog)
    }

    /// catalog-svc as it runs now.
    var catalog: ServiceProcess { currentCatalog.withLock { $0 } }
    /// auth-svc's data directory; its `mail/` holds the delivered emails.
    var authDataDirectory: URL { root.appendingPathComponent("auth-svc") }
    /// catalog-svc's data directory.
    var catalogDataDirectory: URL { root.appendingPathComponent("catalog-svc") }

    /// Creates the root, then starts auth-svc and, once it listens, catalog-svc.
    static func launch(seeded: CatalogSeeding, sourceLocation: SourceLocation) async throws -> CatalogStack {
        let root = try TestScratch.makeDirectory(prefix: "catalog-svc-tests")
        do {
            let signingKey = try SigningKey.generate()
            let keyFile = root.appendingPathComponent("signing-key.json")
            try signingKey.save(to: keyFile.path)
            let internalKey = TestScratch.randomKey()
            let auth = try await ServiceProcess.launch(
                "auth-svc",
                arguments: serviceFlags + [
                    "--data-dir", root.appendingPathComponent("auth-svc").path, "--scrypt-log-n", "10",
                    "--signing-key", keyFile.path,
                ],
                environment: ["SHOP_INTERNAL_API_KEY": internalKey], sourceLocation: sourceLocation)
            let adminKey = TestScratch.randomKey()
            let catalog: ServiceProcess
            do {
                catalog = try await launchCatalog(
                    root: root, authPort: auth.port, adminKey: adminKey, internalKey: internalKey, seeded: seeded,
                    sourceLocation: sourceLocation)
            } catch {
                await auth.closeClient()
                await auth.stop()
                throw error
            }
            return CatalogStack(
                root: root, auth: auth, catalog: catalog, adminKey: adminKey, internalKey: internalKey,
                signingKey: signingKey, seeded: seeded)
        } catch {
            try? FileManager.default.removeItem(at: root)
            throw error
        }
    }

    private static func launchCatalog(
        root: URL, authPort: Int, adminKey: String, internalKey: String, seeded: CatalogSeeding, sourceLocation: SourceLocation
    ) async throws -> ServiceProcess {
        let arguments = [
            "--data-dir", root.appendingPathComponent("catalog-svc").path, "--auth-addr", "127.0.0.1:\(authPort)",
        ]
        var environment = ["SHOP_INTERNAL_API_KEY": internalKey, "SHOP_ADMIN_API_KEY": adminKey]
        if seeded == .emptyByEnvironment { environment["SHOP_CATALOG_NO_SEED"] = "1" }
        return try await ServiceProcess.launch(
            "catalog-svc", arguments: serviceFlags + (seeded == .emptyByFlag ? arguments + ["--no-seed"] : arguments),
            environment: environment, sourceLocation: sourceLocation)
    }

    /// The flags both services start with, before their own.
    private static let serviceFlags = ["--port", "0", "--log-level", "info", "--grace-seconds", "2"]

    /// Stops catalog-svc (SIGTERM, or SIGKILL when `crashing`) and starts it again on the same
    /// data directory; returns the exit status of the stopped process (nil when it was killed).
    @discardableResult
    func restartCatalog(crashing: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int32? {
        var status: Int32?
        let old = catalog
        await old.closeClient()
        if crashing {
            await old.kill()
        } else {
            status = await old.stop()
        }
        let fresh = try await Self.launchCatalog(
            root: root, authPort: auth.port, adminKey: adminKey, internalKey: internalKey, seeded: seeded,
            sourceLocation: sourceLocation)
        currentCatalog.withLock { $0 = fresh }
        return status
    }

    /// Stops both processes and removes the root.
    func shutDown() async {
        let catalog = catalog
        await catalog.closeClient()
        await catalog.stop()
        await auth.closeClient()
        await auth.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// The last lines each service logged, and any crash message, for failure reports.
    func logTails() -> String {
        let crash = catalog.log.lines.filter { $0.contains("Fatal error") || $0.contains("runtime failure") }.joined(separator: "\n")
        return "--- catalog-svc:\n\(crash)\n\(catalog.log.tail(25))\n--- auth-svc:\n\(auth.log.tail(15))"
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
