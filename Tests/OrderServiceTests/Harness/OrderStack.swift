import Foundation
import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

/// Bounds how many stacks run at once: each is four processes, and there are two cores.
let stackSlots = ConcurrencySlots(limit: 2)

/// Runs `body` against a fresh stack of auth-, catalog-, basket- and order-svc, each with an
/// empty data directory under one temporary root, then stops every process (SIGTERM, SIGKILL
/// when slow) and removes the root, whether `body` succeeded or not.
///
/// At most two stacks run at once (``stackSlots``), so a parallel run does not starve the cores.
func withOrderStack(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (OrderStack) async throws -> Void
) async throws {
    await stackSlots.acquire()
    let stack = OrderStack()
    var failure: (any Error)?
    do {
        for name in ServiceName.allCases {
            try await stack.launch(name, sourceLocation: sourceLocation)
        }
        try await body(stack)
    } catch {
        // The thrown error fails the test; the services' own account helps explain it.
        FileHandle.standardError.write(Data("order stack logs after \(error):\n\(stack.logTails())\n".utf8))
        failure = error
    }
    await stack.shutDown()
    await stackSlots.release()
    if let failure { throw failure }
}

/// The four executables of a stack, in start order (each needs the ones before it).
enum ServiceName: String, CaseIterable, Sendable {
    case auth = "auth-svc"
    case catalog = "catalog-svc"
    case basket = "basket-svc"
    case order = "order-svc"
}

/// A running stack: the processes (each with a client), and the keys they were given.
///
/// Thread-safe: the processes, which a restart replaces, live behind a `Mutex`.
final class OrderStack: Sendable {
    /// The temporary directory holding each service's data directory.
    let root: URL
    /// `SHOP_INTERNAL_API_KEY` of every service (catalog-svc's stock methods take it).
    let internalKey = TestScratch.randomKey()
    /// `SHOP_ADMIN_API_KEY` of catalog-svc.
    let adminKey = TestScratch.randomKey()

    private let members = Mutex<[ServiceName: ServiceProcess]>([:])

    /// Makes a stack with nothing running yet.
    init() {
        root = TestScratch.directoryURL(prefix: "order-svc-tests")
    }

    /// The data directory of `name`.
    func dataDirectory(_ name: ServiceName) -> URL { root.appendingPathComponent(name.rawValue) }

    /// The running process of `name`.
    func service(_ name: ServiceName) throws -> ServiceProcess { try member(name) }

    /// The client of `name`.
    func client(_ name: ServiceName) throws -> RPCClient { try member(name).client }

    /// Starts `name` on `port` (0: the OS chooses) with the flags the brief gives each service,
    /// pointing it at the services started before it, and makes a new client of it.
    func launch(_ name: ServiceName, port: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let directory = dataDirectory(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var arguments = ["--port", "\(port)", "--data-dir", directory.path, "--log-level", "info"]
        var environment = ["SHOP_INTERNAL_API_KEY": internalKey]
        switch name {
        case .auth:
            arguments += ["--scrypt-log-n", "10"]
        case .catalog:
            arguments += ["--auth-addr", try address(of: .auth)]
            environment["SHOP_ADMIN_API_KEY"] = adminKey
        case .basket:
            let upstreams = ["--auth-addr", try address(of: .auth), "--catalog-addr", try address(of: .catalog)]
            arguments += upstreams
        case .order:
            let upstreams = [
                "--auth-addr", try address(of: .auth), "--catalog-addr", try address(of: .catalog),
                "--basket-addr", try address(of: .basket),
            ]
            arguments += upstreams
        }
        let service = try await ServiceProcess.launch(
            name.rawValue, arguments: arguments, environment: environment, sourceLocation: sourceLocation)
        let replaced = members.withLock { $0.updateValue(service, forKey: name) }
        await replaced?.closeClient()
    }

    /// Starts `name` again on the port and data directory it had, after it was stopped or killed.
    func restart(_ name: ServiceName, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let previous = try service(name)
        try await launch(name, port: previous.port, sourceLocation: sourceLocation)
    }

    /// The last log lines of `name`, for failure messages ("" when it never started).
    func logTail(of name: ServiceName) -> String {
        members.withLock { $0[name] }?.log.tail(40) ?? ""
    }

    /// The last log lines of every service, for failure reports.
    func logTails() -> String {
        let current = members.withLock { $0 }
        return ServiceName.allCases.compactMap { name in
            current[name].map { "--- \(name.rawValue)\n\($0.log.tail(40))" }
        }.joined(separator: "\n")
    }

    /// Closes the clients, stops the services in reverse start order and removes the root.
    func shutDown() async {
        let current = members.withLock { $0 }
        for name in ServiceName.allCases.reversed() {
            guard let service = current[name] else { continue }
            await service.closeClient()
            await service.stop(patience: .seconds(4))
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// `host:port` of the running `name`.
    private func address(of name: ServiceName) throws -> String { try member(name).address }

    private func member(_ name: ServiceName) throws -> ServiceProcess {
        guard let member = members.withLock({ $0[name] }) else { throw StackError.didNotStart(name.rawValue) }
        return member
    }
}

/// Why the harness could not provide a service.
enum StackError: Error {
    /// The named service was never started in this stack.
    case didNotStart(String)
}
