import Credentials
import Foundation
import RPCHTTP2
import Synchronization
import Testing

/// Runs `body` against a fresh pair of real processes — `auth-svc`, and `catalog-svc` pointed
/// at it — each with its own data directory under one temporary root; then stops both and
/// removes the root, whether `body` succeeded or not.
///
/// `seeded: false` starts the catalog with `--no-seed` (an empty catalog). At most
/// ``PairSlots/limit`` pairs run at once, so a parallel run does not starve two cores.
@discardableResult
func withCatalogService<Result>(
    seeded: Bool = true, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (CatalogStack) async throws -> Result
) async throws -> Result {
    await PairSlots.shared.acquire()
    let stack: CatalogStack
    do {
        stack = try await CatalogStack.launch(seeded: seeded, sourceLocation: sourceLocation)
    } catch {
        await PairSlots.shared.release()
        throw error
    }
    do {
        let result = try await body(stack)
        await stack.shutDown()
        await PairSlots.shared.release()
        return result
    } catch {
        // The thrown error fails the test; the services' own account helps explain it.
        FileHandle.standardError.write(Data("\(error)\n\(stack.logTails())\n".utf8))
        await stack.shutDown()
        await PairSlots.shared.release()
        throw error
    }
}

/// A running auth-svc and catalog-svc, the keys they share and the key auth-svc signs with.
///
/// Thread-safe: the catalog process, which ``restartCatalog()`` replaces, lives in a `Mutex`;
/// everything else is immutable and `Sendable`.
final class CatalogStack: Sendable {
    /// The temporary root holding both data directories.
    let root: URL
    /// auth-svc.
    let auth: LaunchedService
    /// `SHOP_ADMIN_API_KEY` of catalog-svc.
    let adminKey: String
    /// `SHOP_INTERNAL_API_KEY` of both services.
    let internalKey: String
    /// The key auth-svc signs access tokens with (`--signing-key`), so tests can mint tokens.
    let signingKey: SigningKey
    private let seeded: Bool
    private let currentCatalog: Mutex<LaunchedService>

    private init(
        root: URL, auth: LaunchedService, catalog: LaunchedService, adminKey: String, internalKey: String,
        signingKey: SigningKey, seeded: Bool
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
    var catalog: LaunchedService { currentCatalog.withLock { $0 } }
    /// auth-svc's data directory; its `mail/` holds the delivered emails.
    var authDataDirectory: URL { root.appendingPathComponent("auth-svc") }
    /// catalog-svc's data directory.
    var catalogDataDirectory: URL { root.appendingPathComponent("catalog-svc") }

    /// Creates the root, then starts auth-svc and, once it listens, catalog-svc.
    static func launch(seeded: Bool, sourceLocation: SourceLocation) async throws -> CatalogStack {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-svc-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        do {
            let signingKey = try SigningKey.generate()
            let keyFile = root.appendingPathComponent("signing-key.json")
            try signingKey.save(to: keyFile.path)
            let internalKey = randomKey()
            let auth = try await LaunchedService.launch(
                "auth-svc",
                arguments: [
                    "--data-dir", root.appendingPathComponent("auth-svc").path, "--scrypt-log-n", "10",
                    "--signing-key", keyFile.path,
                ],
                environment: ["SHOP_INTERNAL_API_KEY": internalKey], sourceLocation: sourceLocation)
            let adminKey = randomKey()
            let catalog: LaunchedService
            do {
                catalog = try await launchCatalog(
                    root: root, authPort: auth.port, adminKey: adminKey, internalKey: internalKey, seeded: seeded,
                    sourceLocation: sourceLocation)
            } catch {
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
        root: URL, authPort: Int, adminKey: String, internalKey: String, seeded: Bool, sourceLocation: SourceLocation
    ) async throws -> LaunchedService {
        let arguments = [
            "--data-dir", root.appendingPathComponent("catalog-svc").path, "--auth-addr", "127.0.0.1:\(authPort)",
        ]
        return try await LaunchedService.launch(
            "catalog-svc", arguments: seeded ? arguments : arguments + ["--no-seed"],
            environment: ["SHOP_INTERNAL_API_KEY": internalKey, "SHOP_ADMIN_API_KEY": adminKey],
            sourceLocation: sourceLocation)
    }

    /// Stops catalog-svc (SIGTERM, or SIGKILL when `crashing`) and starts it again on the same
    /// data directory; returns the exit status of the stopped process (nil when it was killed).
    @discardableResult
    func restartCatalog(crashing: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int32? {
        var status: Int32?
        if crashing {
            await catalog.crash()
        } else {
            status = await catalog.stop()
        }
        let fresh = try await Self.launchCatalog(
            root: root, authPort: auth.port, adminKey: adminKey, internalKey: internalKey, seeded: seeded,
            sourceLocation: sourceLocation)
        currentCatalog.withLock { $0 = fresh }
        return status
    }

    /// Stops both processes and removes the root.
    func shutDown() async {
        await catalog.stop()
        await auth.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// The last lines each service logged, and any crash message, for failure reports.
    func logTails() -> String {
        let crash = catalog.log.lines.filter { $0.contains("Fatal error") || $0.contains("runtime failure") }.joined(separator: "\n")
        return "--- catalog-svc:\n\(crash)\n\(catalog.log.tail(25))\n--- auth-svc:\n\(auth.log.tail(15))"
    }

    /// 32 random bytes in hex: an API key nobody else knows.
    static func randomKey() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
    }
}

/// Bounds how many service pairs run at once. An actor: safe from any task.
actor PairSlots {
    /// The most pairs running at a time: two cores, two processes per pair.
    static let limit = 3
    /// The slots every test shares.
    static let shared = PairSlots()

    private var taken = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Waits for a free slot and takes it.
    func acquire() async {
        guard taken >= Self.limit else {
            taken += 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Gives a slot back, straight to the longest waiter if there is one.
    func release() {
        if waiters.isEmpty {
            taken -= 1
        } else {
            waiters.removeFirst().resume()
        }
    }
}
