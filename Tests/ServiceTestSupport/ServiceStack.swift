package import Credentials
package import Foundation
package import RPC
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

/// A running stack: the processes (each with a client), and the keys they were given. The one
/// harness of every suite that runs services as processes; a suite adds its own conveniences
/// (its service's calls, accounts, products) as an extension. Tests reach a service through
/// ``client(_:)``, which does not say what carries the calls.
///
/// Thread-safe: the processes, which a restart replaces, live behind a `Mutex`.
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

    private let members = Mutex<[ServiceName: ServiceProcess]>([:])

    /// Makes a stack with nothing running yet.
    package init(extraArguments: [ServiceName: [String]] = [:], environment: [ServiceName: [String: String]] = [:]) {
        root = TestScratch.directoryURL(prefix: "service-stack")
        self.extraArguments = extraArguments
        extraEnvironment = environment
    }

    /// The data directory of `name`.
    package func dataDirectory(_ name: ServiceName) -> URL { root.appendingPathComponent(name.rawValue) }

    /// The running process of `name`.
    package func service(_ name: ServiceName) throws -> ServiceProcess { try member(name) }

    /// The client of `name`.
    package func client(_ name: ServiceName) throws -> RPCClient { try member(name).client }

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
        arguments += extraArguments[name] ?? []
        environment.merge(extraEnvironment[name] ?? [:]) { _, extra in extra }
        let service = try await ServiceProcess.launch(
            name.rawValue, arguments: arguments, environment: environment, sourceLocation: sourceLocation)
        let replaced = members.withLock { $0.updateValue(service, forKey: name) }
        await replaced?.closeClient()
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

    /// The last log lines of `name`, for failure messages ("" when it never started).
    package func logTail(of name: ServiceName) -> String {
        members.withLock { $0[name] }?.log.tail(40) ?? ""
    }

    /// The last log lines of every service, for failure reports.
    package func logTails() -> String {
        let current = members.withLock { $0 }
        return ServiceName.allCases.compactMap { name in
            current[name].map { "--- \(name.rawValue)\n\($0.log.tail(40))" }
        }.joined(separator: "\n")
    }

    /// Closes the clients, stops the services in reverse start order and removes the root.
    package func shutDown() async {
        let current = members.withLock { $0 }
        for name in ServiceName.allCases.reversed() {
            guard let service = current[name] else { continue }
            await service.closeClient()
            await service.stop(patience: .seconds(4))
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// `host:port` of the running `name`.
    package func address(of name: ServiceName) throws -> String { try member(name).address }

    private func member(_ name: ServiceName) throws -> ServiceProcess {
        guard let member = members.withLock({ $0[name] }) else { throw StackError.didNotStart(name.rawValue) }
        return member
    }
}

/// Why a stack could not provide a service.
package enum StackError: Error {
    /// The named service was never started in this stack.
    case didNotStart(String)
}
