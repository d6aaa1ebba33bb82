import Foundation
import RPCHTTP2
import Synchronization
import Testing

/// Runs `body` against a fresh stack of auth-, catalog-, basket- and order-svc, each with an
/// empty data directory under one temporary root, then stops every process (SIGTERM, SIGKILL
/// when slow) and removes the root, whether `body` succeeded or not.
///
/// At most ``StackSlots/limit`` stacks run at once, so a parallel run does not starve the cores.
func withOrderStack(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (OrderStack) async throws -> Void
) async throws {
    await StackSlots.shared.acquire()
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
    await StackSlots.shared.release()
    if let failure { throw failure }
}

/// The four executables of a stack, in start order (each needs the ones before it).
enum ServiceName: String, CaseIterable, Sendable {
    case auth = "auth-svc"
    case catalog = "catalog-svc"
    case basket = "basket-svc"
    case order = "order-svc"
}

/// A running stack: the processes, a client of each, and the keys they were given.
///
/// Thread-safe: the processes and clients, which a restart replaces, live behind a `Mutex`.
final class OrderStack: Sendable {
    /// The temporary directory holding each service's data directory.
    let root: URL
    /// `SHOP_INTERNAL_API_KEY` of every service (catalog-svc's stock methods take it).
    let internalKey = OrderStack.randomKey()
    /// `SHOP_ADMIN_API_KEY` of catalog-svc.
    let adminKey = OrderStack.randomKey()

    /// A running service and the client the tests call it with.
    private struct Member: Sendable {
        let service: RunningService
        let client: RPCClient
    }

    private let members = Mutex<[ServiceName: Member]>([:])

    /// Makes a stack with nothing running yet.
    init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("order-svc-tests-\(UUID().uuidString)")
    }

    /// The data directory of `name`.
    func dataDirectory(_ name: ServiceName) -> URL { root.appendingPathComponent(name.rawValue) }

    /// The running process of `name`.
    func service(_ name: ServiceName) throws -> RunningService { try member(name).service }

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
        let service = try await RunningService.launch(
            name.rawValue, arguments: arguments, environment: environment, sourceLocation: sourceLocation)
        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: service.port))
        let replaced = members.withLock { $0.updateValue(Member(service: service, client: client), forKey: name) }
        await replaced?.client.close()
    }

    /// Starts `name` again on the port and data directory it had, after it was stopped or killed.
    func restart(_ name: ServiceName, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let previous = try service(name)
        try await launch(name, port: previous.port, sourceLocation: sourceLocation)
    }

    /// The last log lines of `name`, for failure messages ("" when it never started).
    func logTail(of name: ServiceName) -> String {
        members.withLock { $0[name] }?.service.log.tail() ?? ""
    }

    /// The last log lines of every service, for failure reports.
    func logTails() -> String {
        let current = members.withLock { $0 }
        return ServiceName.allCases.compactMap { name in
            current[name].map { "--- \(name.rawValue)\n\($0.service.log.tail())" }
        }.joined(separator: "\n")
    }

    /// Closes the clients, stops the services in reverse start order and removes the root.
    func shutDown() async {
        let current = members.withLock { $0 }
        for name in ServiceName.allCases.reversed() {
            guard let member = current[name] else { continue }
            await member.client.close()
            await member.service.stop()
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// `host:port` of the running `name`.
    private func address(of name: ServiceName) throws -> String { try member(name).service.address }

    private func member(_ name: ServiceName) throws -> Member {
        guard let member = members.withLock({ $0[name] }) else { throw StackError.didNotStart(name.rawValue) }
        return member
    }

    /// 32 random bytes in hex.
    private static func randomKey() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
    }
}

/// Bounds how many stacks run at once: each is four processes, and there are two cores.
/// An actor: safe from any task.
actor StackSlots {
    /// The most stacks running at a time.
    static let limit = 2
    /// The slots every test shares.
    static let shared = StackSlots()

    private var inUse = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Waits for a free slot and takes it.
    func acquire() async {
        if inUse < Self.limit {
            inUse += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Returns a slot, handing it straight to the longest waiter if there is one.
    func release() {
        if waiting.isEmpty {
            inUse -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
