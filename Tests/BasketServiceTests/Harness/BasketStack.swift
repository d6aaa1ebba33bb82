import Foundation
import RPCHTTP2
import Testing

/// Runs `body` against a fresh `auth-svc`, `catalog-svc` (with its seed catalog of 24
/// products) and `basket-svc`, each with its own data directory under one temporary
/// directory; then stops them (SIGTERM, SIGKILL after a few seconds) and removes the
/// directory, whether `body` succeeded or not.
///
/// At most ``StackSlots/limit`` stacks run at once, so that a parallel run does not starve
/// two cores.
@discardableResult
func withBasketStack<Result>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (BasketStack) async throws -> Result
) async throws -> Result {
    await StackSlots.shared.acquire()
    let stack: BasketStack
    do {
        stack = try await BasketStack.launch(sourceLocation: sourceLocation)
    } catch {
        await StackSlots.shared.release()
        throw error
    }
    do {
        let result = try await body(stack)
        await stack.shutDown()
        await StackSlots.shared.release()
        return result
    } catch {
        FileHandle.standardError.write(Data("services' logs after \(error):\n\(stack.logTails())\n".utf8))
        await stack.shutDown()
        await StackSlots.shared.release()
        throw error
    }
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
    /// A client of auth-svc.
    let authClient: RPCClient
    /// A client of catalog-svc.
    let catalogClient: RPCClient
    /// A client of basket-svc.
    let basketClient: RPCClient

    private init(
        root: URL, internalKey: String, adminKey: String, services: (ServiceProcess, ServiceProcess, ServiceProcess)
    ) throws {
        self.root = root
        self.internalKey = internalKey
        self.adminKey = adminKey
        (auth, catalog, basket) = services
        authClient = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: auth.port))
        catalogClient = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: catalog.port))
        basketClient = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: basket.port))
    }

    /// Starts the services in dependency order: auth-svc, catalog-svc, basket-svc.
    static func launch(sourceLocation: SourceLocation) async throws -> BasketStack {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("basket-svc-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let internalKey = randomKey()
        let adminKey = randomKey()
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
            return try BasketStack(
                root: root, internalKey: internalKey, adminKey: adminKey, services: (auth, catalog, basket))
        } catch {
            for service in started.reversed() { await service.stop() }
            try? FileManager.default.removeItem(at: root)
            throw error
        }
    }

    /// Closes the clients, stops the services (basket first) and removes the data.
    func shutDown() async {
        await basketClient.close()
        await catalogClient.close()
        await authClient.close()
        await basket.stop()
        await catalog.stop()
        await auth.stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// The end of each service's log, for failure reports.
    func logTails() -> String {
        [auth, catalog, basket].map { "--- \($0.name)\n\($0.output.tail())" }.joined(separator: "\n")
    }

    /// 32 random bytes in hex.
    private static func randomKey() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
    }
}

/// Bounds how many stacks run at once. An actor: safe from any task.
actor StackSlots {
    /// The most stacks (three processes each) running at a time.
    static let limit = 2
    /// The slots every test shares.
    static let shared = StackSlots()

    private var taken = 0
    private var queue: [CheckedContinuation<Void, Never>] = []

    /// Waits for a free slot and takes it.
    func acquire() async {
        guard taken >= Self.limit else {
            taken += 1
            return
        }
        await withCheckedContinuation { queue.append($0) }
    }

    /// Gives a slot back, straight to the first waiter if there is one.
    func release() {
        if queue.isEmpty {
            taken -= 1
        } else {
            queue.removeFirst().resume()
        }
    }
}
