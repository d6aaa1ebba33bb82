package import Credentials
package import Foundation
package import RPC
package import ServiceKit
import RPCHTTP2
package import Testing
internal import Synchronization

/// The executables of a stack, in start order (each needs the ones before it).
package enum ServiceName: String, CaseIterable, Sendable {
    case auth = "auth-svc"
    case catalog = "catalog-svc"
    case basket = "basket-svc"
    case order = "order-svc"
    case gateway = "gateway"

    /// The four services, without the gateway.
    package static let services: [ServiceName] = [.auth, .catalog, .basket, .order]
}

/// Runs `body` against a fresh stack of `members` (in start order), each with an empty data
/// directory under one temporary root, then stops every process (SIGTERM, SIGKILL when slow)
/// and removes the root, whether `body` succeeded or not. On failure the services' last log
/// lines go to standard error.
///
/// `extraArguments` and `environment` add to a service's command line and variables; `ports`
/// fixes a service's port (the rest the OS chooses). The stack holds one of
/// ``serviceProcessSlots`` per member while it runs, so that a parallel run does not start
/// more services than two cores bring up in time.
@discardableResult
package func withServiceStack<Result>(
    _ members: [ServiceName], extraArguments: [ServiceName: [String]] = [:],
    environment: [ServiceName: [String: String]] = [:], ports: [ServiceName: Int] = [:],
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (ServiceStack) async throws -> Result
) async throws -> Result {
    try await serviceProcessSlots.run(
        slots: members.count,
        launch: { ServiceStack(extraArguments: extraArguments, environment: environment) },
        report: { stack, error in "service stack logs after \(error):\n\(stack.logTails())\n" },
        shutDown: { await $0.shutDown() }
    ) { stack in
        for name in members {
            try await stack.launch(name, port: ports[name] ?? 0, sourceLocation: sourceLocation)
        }
        return try await body(stack)
    }
}

/// Builds the core of one member of an in-process stack (its `<Name>Server.make`), over
/// ``ServiceStack/dataDirectory(_:)`` and new clients of the members built before it
/// (``ServiceStack/newClient(_:)``, which the core closes). The stack starts and closes it
/// (``InProcessService``).
package typealias InProcessServiceBuilder = @Sendable (ServiceName, ServiceStack) async throws -> any ServiceCore

/// Runs `body` against a fresh stack of `members` (in start order) built in this process:
/// each member's core made by `build` over an empty data directory holding the stack's keys,
/// its clients calling its router through an ``InProcessTransport``. No process, no port, so
/// no ``serviceProcessSlots``. Closes every member (in reverse order) and removes the root,
/// whether `body` succeeded or not.
@discardableResult
package func withInProcessServiceStack<Result>(
    _ members: [ServiceName], build: InProcessServiceBuilder, _ body: (ServiceStack) async throws -> Result
) async throws -> Result {
    let stack = ServiceStack()
    do {
        for name in members { try await stack.build(name, with: build) }
        let result = try await body(stack)
        await stack.shutDown()
        return result
    } catch {
        await stack.shutDown()
        throw error
    }
}

/// A running stack: its members (processes, or services built in this process) each with a
/// client, and the keys they were given. The one harness of every service suite; a suite adds
/// its own conveniences (its service's calls, accounts, products) as an extension. Tests reach
/// a service through ``client(_:)``, which does not say what carries the calls.
///
/// Thread-safe: the members, which a restart replaces, live behind a `Mutex`.
package final class ServiceStack: Sendable {
    /// The temporary directory holding each service's data directory.
    package let root: URL
    /// `SHOP_INTERNAL_API_KEY` of every service.
    package let internalKey = TestScratch.randomKey()
    /// `SHOP_ADMIN_API_KEY` of catalog-svc and the gateway.
    package let adminKey = TestScratch.randomKey()
    /// Flags added to a service's command line, after the standard ones.
    package let extraArguments: [ServiceName: [String]]
    /// Variables added to a service's environment, after the keys.
    package let extraEnvironment: [ServiceName: [String: String]]

    /// How one member runs.
    private enum Member: Sendable {
        /// A child process, reached over loopback.
        case process(ServiceProcess)
        /// A core in this process, reached through an ``InProcessTransport``.
        case inProcess(InProcessService)

        /// The client of the member.
        var client: RPCClient {
            switch self {
            case .process(let process): process.client
            case .inProcess(let service): service.client
            }
        }

        /// Closes the client (a process) or the whole service (in process).
        func close() async {
            switch self {
            case .process(let process):
                await process.closeClient()
                await process.stop(patience: .seconds(4))
            case .inProcess(let service):
                await service.close()
            }
        }
    }

    private let members = Mutex<[ServiceName: Member]>([:])
    /// The name of the PostgreSQL database the services keep their data in, each in its own
    /// schema, when the suites run on PostgreSQL (``TestBackend``); nil on SQLite.
    private let databaseName: String?
    /// The URL of that database once created.
    private let createdDatabaseURL = Mutex<String?>(nil)

    /// Makes a stack with nothing running yet.
    package init(extraArguments: [ServiceName: [String]] = [:], environment: [ServiceName: [String: String]] = [:]) {
        root = TestScratch.directoryURL(prefix: "service-stack")
        self.extraArguments = extraArguments
        extraEnvironment = environment
        databaseName = TestBackend.isPostgreSQL ? "stack_" + UUID().uuidString.prefix(13).lowercased().replacing("-", with: "") : nil
    }

    /// The URL of the PostgreSQL database the stack's services share when the suites run on
    /// PostgreSQL, created on first use (on ``PostgreSQLServer``'s shared server) and dropped
    /// by ``shutDown()``; nil on SQLite.
    package func databaseURL() async throws -> String? {
        guard let databaseName else { return nil }
        if let url = createdDatabaseURL.withLock({ $0 }) { return url }
        let url = try await PostgreSQLServer.createDatabase(databaseName)
        createdDatabaseURL.withLock { $0 = url }
        return url
    }

    /// The data directory of `name`.
    package func dataDirectory(_ name: ServiceName) -> URL { root.appendingPathComponent(name.rawValue) }

    /// The running process of `name`; throws when `name` runs in this process.
    package func service(_ name: ServiceName) throws -> ServiceProcess {
        guard case .process(let process) = try member(name) else { throw StackError.notAProcess(name.rawValue) }
        return process
    }

    /// The client of `name`.
    package func client(_ name: ServiceName) throws -> RPCClient { try member(name).client }

    /// A new client of `name`, built in this process, for a service built after it to own
    /// (``InProcessService/makeClient()``).
    package func newClient(_ name: ServiceName) throws -> RPCClient {
        try inProcessService(name).makeClient()
    }

    /// `name` as built in this process; throws when it runs as a process.
    package func inProcessService(_ name: ServiceName) throws -> InProcessService {
        guard case .inProcess(let service) = try member(name) else { throw StackError.notInProcess(name.rawValue) }
        return service
    }

    /// Builds `name` in this process with `build`, over its data directory holding the stack's
    /// keys as the files the services read them from (``internalKey`` everywhere, ``adminKey``
    /// for catalog-svc and the gateway), and starts it (``InProcessService``).
    package func build(_ name: ServiceName, with build: InProcessServiceBuilder) async throws {
        let directory = dataDirectory(name)
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Self.writeSecret(internalKey, to: directory.appendingPathComponent("internal-api-key"))
        if name == .catalog || name == .gateway {
            try Self.writeSecret(adminKey, to: directory.appendingPathComponent("admin-api-key"))
        }
        let service = InProcessService(name, core: try await build(name, self))
        members.withLock { $0[name] = .inProcess(service) }
    }

    /// Writes `secret` to `file` with mode 0600, as `ServiceSecret` keeps the secrets it makes.
    private static func writeSecret(_ secret: String, to file: URL) throws {
        try Data(secret.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    }

    /// Starts `name` on `port` (0: the OS chooses) with the flags DESIGN.md gives each
    /// service, pointing it at the services started before it, and makes a new client of it.
    package func launch(_ name: ServiceName, port: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let directory = dataDirectory(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A short grace period: stopping a service that holds watches takes 2 s, not 10.
        var arguments = ["--port", "\(port)", "--data-dir", directory.path, "--log-level", "info", "--grace-seconds", "2"]
        var environment = ["SHOP_INTERNAL_API_KEY": internalKey]
        switch name {
        case .auth:
            arguments += ["--scrypt-log-n", "10"]
        case .catalog:
            arguments += ["--auth-addr", try address(of: .auth)]
            environment["SHOP_ADMIN_API_KEY"] = adminKey
        case .basket:
            arguments += ["--auth-addr", try address(of: .auth), "--catalog-addr", try address(of: .catalog)]
        case .order:
            arguments += [
                "--auth-addr", try address(of: .auth), "--catalog-addr", try address(of: .catalog),
                "--basket-addr", try address(of: .basket),
            ]
        case .gateway:
            arguments += [
                "--auth-addr", try address(of: .auth), "--catalog-addr", try address(of: .catalog),
                "--basket-addr", try address(of: .basket), "--order-addr", try address(of: .order),
            ]
            environment["SHOP_ADMIN_API_KEY"] = adminKey
        }
        if name != .gateway, let url = try await databaseURL() { environment["SHOP_DATABASE_URL"] = url }
        arguments += extraArguments[name] ?? []
        environment.merge(extraEnvironment[name] ?? [:]) { _, extra in extra }
        let service = try await ServiceProcess.launch(
            name.rawValue, arguments: arguments, environment: environment, sourceLocation: sourceLocation)
        let replaced = members.withLock { $0.updateValue(.process(service), forKey: name) }
        if case .process(let process) = replaced { await process.closeClient() }
    }

    /// Stops `name` (SIGTERM, or SIGKILL when `crashing`) unless it has stopped already, and
    /// starts it again on the port and data directory it had; returns the exit status of the
    /// stop (nil when it was killed).
    @discardableResult
    package func restart(
        _ name: ServiceName, crashing: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Int32? {
        let previous = try service(name)
        await previous.closeClient()
        var status: Int32?
        if crashing {
            await previous.kill()
        } else {
            status = await previous.stop()
        }
        try await launch(name, port: previous.port, sourceLocation: sourceLocation)
        return status
    }

    /// The key auth-svc signs access tokens with, as it keeps it in its data directory: tests
    /// mint tokens with it (expired, re-addressed) whose signatures are valid.
    package func signingKey() throws -> SigningKey {
        try ExpiredAccessToken.signingKey(ofAuthDataDirectory: dataDirectory(.auth))
    }

    /// The last log lines of `name`, for failure messages ("" when it never started or runs
    /// in this process).
    package func logTail(of name: ServiceName) -> String {
        guard case .process(let process) = members.withLock({ $0[name] }) else { return "" }
        return process.log.tail(40)
    }

    /// The last log lines of every process, for failure reports.
    package func logTails() -> String {
        let current = members.withLock { $0 }
        return ServiceName.allCases.compactMap { name in
            guard case .process(let process) = current[name] else { return nil }
            return "--- \(name.rawValue)\n\(process.log.tail(40))"
        }.joined(separator: "\n")
    }

    /// Closes the members in reverse start order (a process: its client, then SIGTERM) and
    /// removes the root.
    package func shutDown() async {
        let current = members.withLock { $0 }
        for name in ServiceName.allCases.reversed() {
            await current[name]?.close()
        }
        try? FileManager.default.removeItem(at: root)
        if let databaseName, createdDatabaseURL.withLock({ $0 }) != nil {
            try? await PostgreSQLServer.dropDatabase(databaseName)
        }
    }

    /// `host:port` of the running process `name`.
    package func address(of name: ServiceName) throws -> String { try service(name).address }

    private func member(_ name: ServiceName) throws -> Member {
        guard let member = members.withLock({ $0[name] }) else { throw StackError.didNotStart(name.rawValue) }
        return member
    }
}

/// Why a stack could not provide a service.
package enum StackError: Error {
    /// The named service was never started in this stack.
    case didNotStart(String)
    /// The named service runs in the test process: it has no process, port or log.
    case notAProcess(String)
    /// The named service runs as a process, not in the test process.
    case notInProcess(String)
}
