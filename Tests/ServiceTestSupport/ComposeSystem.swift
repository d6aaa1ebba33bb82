package import Foundation
package import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `deploy/compose` run the way end-to-end tests run it: against the executables this build
/// made (`SHOP_BIN_DIR`, so nothing is built), with its data in a scratch directory and on
/// ports the kernel picked, so that it never meets a developer's own running system.
package struct ComposeSystem: Sendable {
    /// One row of `deploy/compose status --json`.
    package struct Row: Decodable, Sendable, Equatable {
        /// The service's name.
        package let name: String
        /// `127.0.0.1:port`.
        package let address: String
        /// The service process; nil when it does not run.
        package let pid: Int?
        /// `serving`, `unhealthy`, `restarting` or `stopped`.
        package let status: String
        /// Its supervisor; nil when stopped.
        package let supervisorPid: Int?
        /// How often the supervisor restarted it.
        package let restarts: Int
    }

    /// The scratch directory, removed by ``withComposeSystem(ports:environment:sourceLocation:_:)``.
    package let scratch: URL
    /// `SHOP_DATA`.
    package let data: URL
    /// Each service's port.
    package let ports: [String: Int]
    /// The services compose runs here: those of ``ServiceName`` that Package.swift declares
    /// (the rule compose itself follows), in start order.
    package let services: [String]
    /// Variables every compose command gets on top of ours (they pass through to the services).
    package let extraEnvironment: [String: String]

    /// A system in `scratch` on `ports`; nothing runs until `up`.
    /// `SHOP_PORT_BASE` when the system's ports follow it (replicas take ports after each
    /// service's first), else nil: each service's port is set on its own (``ports``).
    package let portBase: Int?

    package init(
        scratch: URL, data: URL, ports: [String: Int], services: [String], extraEnvironment: [String: String] = [:],
        portBase: Int? = nil
    ) {
        self.portBase = portBase
        self.scratch = scratch
        self.data = data
        self.ports = ports
        self.services = services
        self.extraEnvironment = extraEnvironment
    }

    /// The repository's top directory (this file is `Tests/ServiceTestSupport/ComposeSystem.swift`).
    package static let repository: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `deploy/compose` script.
    package static var script: URL { repository.appendingPathComponent("deploy/compose") }

    /// The directory of the executables this test bundle was built with.
    package static var binDirectory: URL { ServiceProcess.executable("auth-svc").deletingLastPathComponent() }

    /// The variable compose reads for `name`'s port, e.g. `SHOP_CATALOG_PORT`.
    package static func portVariable(of name: String) -> String {
        let short = name.hasSuffix("-svc") ? String(name.dropLast(4)) : name
        return "SHOP_\(short.uppercased())_PORT"
    }

    /// The services of ``ServiceName`` that Package.swift declares as executables, in start order.
    package static func declaredServices() throws -> [String] {
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let declared = Set(manifest.matches(of: #/\.executableTarget\(\s*name:\s*"([^"]+)"/#).map { String($0.output.1) })
        return ServiceName.allCases.map(\.rawValue).filter(declared.contains)
    }

    /// The environment of every compose command: none of the caller's `SHOP_*` variables,
    /// then ours.
    package var environment: [String: String?] {
        var environment: [String: String?] = [:]
        for name in ProcessInfo.processInfo.environment.keys where name.hasPrefix("SHOP_") { environment[name] = .some(nil) }
        for (name, value) in extraEnvironment { environment[name] = value }
        environment["SHOP_DATA"] = data.path
        // `up` records what it started in shopctl's directory: the scratch one, not the user's.
        environment["XDG_CONFIG_HOME"] = configHome.path
        environment["SHOP_BIN_DIR"] = Self.binDirectory.path
        environment["SHOP_HEALTH_TIMEOUT"] = "90"
        if let portBase {
            environment["SHOP_PORT_BASE"] = String(portBase)
        } else {
            for (name, port) in ports { environment[Self.portVariable(of: name)] = String(port) }
        }
        return environment
    }

    /// The `XDG_CONFIG_HOME` of every compose command: `up` writes `shopctl/compose.json` there.
    package var configHome: URL { scratch.appendingPathComponent("config", isDirectory: true) }

    /// Runs `deploy/compose arguments…`.
    package func run(_ arguments: String..., timeout: Duration = .seconds(180)) async throws -> Command.Result {
        try await run(arguments: arguments, timeout: timeout)
    }

    /// Runs `deploy/compose` with the `arguments` of an array.
    package func run(arguments: [String], timeout: Duration = .seconds(180)) async throws -> Command.Result {
        try await Command.run(Self.script.path, arguments, environment: environment, timeout: timeout)
    }

    /// `deploy/compose status --json`, decoded.
    package func status(sourceLocation: SourceLocation = #_sourceLocation) async throws -> [Row] {
        let result = try await run("status", "--json", timeout: .seconds(60))
        try #require(result.status == 0, "status --json failed: \(result)", sourceLocation: sourceLocation)
        do {
            return try JSONDecoder().decode([Row].self, from: Data(result.output.utf8))
        } catch {
            Issue.record("status --json is not the JSON expected (\(error)):\n\(result.output)", sourceLocation: sourceLocation)
            throw error
        }
    }

    /// The row of `name` in `rows`.
    package func row(_ name: String, in rows: [Row], sourceLocation: SourceLocation = #_sourceLocation) throws -> Row {
        try #require(rows.first { $0.name == name }, "status has no row for \(name): \(rows)", sourceLocation: sourceLocation)
    }

    /// The log compose keeps for `name`.
    package func log(of name: String) -> String {
        (try? String(contentsOf: data.appendingPathComponent("run/\(name).log"), encoding: .utf8)) ?? ""
    }

    /// The processes whose command line mentions the scratch directory (`pgrep -af`): every
    /// supervisor and service compose started here has it in its arguments.
    package func processesLeft() async throws -> [String] {
        let result = try await Command.run("pgrep", ["-af", scratch.path], timeout: .seconds(30))
        return result.output.split(separator: "\n").map(String.init)
    }

}

/// Runs `body` with a fresh ``ComposeSystem`` on `ports` (default: five the kernel picks) whose
/// commands get `environment` too, then runs `down`, kills whatever is still left (recording
/// an issue if anything was) and removes the scratch directory, whether `body` succeeded or not.
/// Holds one of ``serviceProcessSlots`` per service while the system may run.
///
/// With `portBase`, no service's port is set on its own: compose derives them from
/// `SHOP_PORT_BASE` (as it must for replicas, which take the ports after each service's first).
package func withComposeSystem(
    ports chosen: [String: Int] = [:], environment: [String: String] = [:], portBase: Int? = nil,
    slots: Int = ServiceName.allCases.count, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (ComposeSystem) async throws -> Void
) async throws {
    try await serviceProcessSlots.withSlots(slots) {
        try await runComposeSystem(
            ports: chosen, environment: environment, portBase: portBase, sourceLocation: sourceLocation, body)
    }
}

/// ``withComposeSystem(ports:environment:sourceLocation:_:)`` once its slots are taken.
private func runComposeSystem(
    ports chosen: [String: Int], environment: [String: String], portBase: Int?, sourceLocation: SourceLocation,
    _ body: (ComposeSystem) async throws -> Void
) async throws {
    let scratch = try TestScratch.makeDirectory(prefix: "deploy-compose")
    let services = try ComposeSystem.declaredServices()
    let names = ServiceName.allCases.map(\.rawValue)
    let free = try FreePorts.take(names.count)
    var ports: [String: Int] = [:]
    for (index, name) in names.enumerated() { ports[name] = chosen[name] ?? free[index] }
    if let portBase {
        // compose's own rule: base + offset, the gateway at base + 1080.
        for (index, name) in names.enumerated() { ports[name] = portBase + (name == "gateway" ? 1080 : index + 1) }
    }
    let system = ComposeSystem(
        scratch: scratch, data: scratch.appendingPathComponent("data"), ports: ports, services: services,
        extraEnvironment: environment, portBase: portBase)
    let outcome: Result<Void, any Error>
    do {
        try await body(system)
        outcome = .success(())
    } catch {
        outcome = .failure(error)
    }
    if case .failure = outcome {
        let logs = services.map { "--- \($0)\n\(system.log(of: $0).split(separator: "\n").suffix(15).joined(separator: "\n"))" }
        FileHandle.standardError.write(Data("compose logs after the failure:\n\(logs.joined(separator: "\n"))\n".utf8))
    }
    _ = try? await system.run("down", timeout: .seconds(120))
    let left = (try? await system.processesLeft()) ?? []
    if !left.isEmpty {
        Issue.record("processes left after down: \(left)", sourceLocation: sourceLocation)
        for line in left {
            if let pid = Int32(line.split(separator: " ").first ?? "") { kill(pid, SIGKILL) }
        }
    }
    try? FileManager.default.removeItem(at: scratch)
    try outcome.get()
}
