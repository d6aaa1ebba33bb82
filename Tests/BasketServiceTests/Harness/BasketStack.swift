import Foundation
import RPCHTTP2
import ServiceTestSupport
import Testing
import RPC

/// Bounds how many stacks (three processes each) run at once.
let stackSlots = ConcurrencySlots(limit: 2)

/// Runs `body` against a fresh `auth-svc`, `catalog-svc` (with its seed catalog of 24
/// products) and `basket-svc`, each with its own data directory under one temporary
/// directory; then stops them (SIGTERM, SIGKILL after a few seconds) and removes the
/// directory, whether `body` succeeded or not.
///
/// At most two stacks run at once (``stackSlots``), so that a parallel run does not starve
/// two cores.
@discardableResult
func withBasketStack<Result>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (BasketStack) async throws -> Result
) async throws -> Result {
    try await stackSlots.run(
        launch: { try await BasketStack.launch(sourceLocation: sourceLocation) },
        report: { stack, error in "services' logs after \(error):\n\(stack.logTails())\n" },
        shutDown: { await $0.shutDown() }, body)
}

/// The three services of a test, their shared keys, and a client of each. Thread-safe:
/// immutable, with thread-safe members.
final class BasketStack: Sendable {
    /// The directory holding the three data directories.
    let root: URL
    /// `SHOP_INTERNAL_API_KEY` of all three services.
    let internalKey: String
    /// `SHOP_ADMIN_API_KEY` of catalog-svc.
    let adminKey: String
    /// auth-svc, which writes its emails into `<root>/auth-svc/mail`.
    let auth: ServiceProcess
    /// catalog-svc.
    let catalog: ServiceProcess
    /// basket-svc, the service under test.
    let basket: ServiceProcess

    private init(
        root: URL, internalKey: String, adminKey: String, services: (ServiceProcess, ServiceProcess, ServiceProcess)
    ) {
        self.root = root
        self.internalKey = internalKey
        self.adminKey = adminKey
        (auth, catalog, basket) = services
    }

    /// A client of auth-svc.
    var authClient: RPCClient { auth.client }
    /// A client of catalog-svc.
    var catalogClient: RPCClient { catalog.client }
    /// A client of basket-svc.
    var basketClient: RPCClient { basket.client }

    /// Starts the services in dependency order: auth-svc, catalog-svc, basket-svc.
    static func launch(sourceLocation: SourceLocation) async throws -> BasketStack {
        let root = try TestScratch.makeDirectory(prefix: "basket-svc-tests")
        let internalKey = TestScratch.randomKey()
        let adminKey = TestScratch.randomKey()
        var started: [ServiceProcess] = []
        func start(_ name: String, _ arguments: [String], _ environment: [String: String] = [:]) async throws -> ServiceProcess {
            let service = try await ServiceProcess.launch(
                name,
                arguments: ["--port", "0", "--data-dir", root.appendingPathComponent(name).path, "--grace-seconds", "2"]
                    + arguments,
                environment: environment.merging(["SHOP_INTERNAL_API_KEY": internalKey]) { ours, _ in ours },
                sourceLocation: sourceLocation)
            started.append(service)
            return service
        }
        do {
            let auth = try await start("auth-svc", ["--scrypt-log-n", "10"])
            let catalog = try await start(
                "catalog-svc", ["--auth-addr", auth.address], ["SHOP_ADMIN_API_KEY": adminKey])
            let basket = try await start(
                "basket-svc", ["--auth-addr", auth.address, "--catalog-addr", catalog.address])
            return BasketStack(
                root: root, internalKey: internalKey, adminKey: adminKey, services: (auth, catalog, basket))
        } catch {
            for service in started.reversed() {
                await service.closeClient()
                await service.stop()
            }
            try? FileManager.default.removeItem(at: root)
            throw error
        }
    }

    /// Closes the clients, stops the services (basket first) and removes the data.
    func shutDown() async {
        await basket.closeClient()
        await catalog.closeClient()
        await auth.closeClient()
        await basket.stop()
        await catalog.stop()
        await auth.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// The end of each service's log, for failure reports.
    func logTails() -> String {
        [auth, catalog, basket].map { "--- \($0.name)\n\($0.log.tail(25))" }.joined(separator: "\n")
    }
}
