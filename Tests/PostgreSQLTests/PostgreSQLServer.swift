import Foundation
import Glibc
import ServiceTestSupport
import Testing

/// A throwaway PostgreSQL server on loopback for one test: `initdb` into a fresh directory,
/// `pg_ctl start` on a port below the ephemeral range, stopped and deleted when the body ends.
/// As root (CI) the server runs as the `postgres` user (`runuser`), since PostgreSQL refuses to
/// run as root. Its one role, `storefront`, is trusted on loopback.
struct PostgreSQLServer: Sendable {
    /// Its port on 127.0.0.1.
    let port: Int

    /// The URL of its `postgres` database.
    var url: String { "postgres://storefront@127.0.0.1:\(port)/postgres" }

    /// Runs `body` against a server started for it.
    static func with<Value>(_ body: (PostgreSQLServer) async throws -> Value) async throws -> Value {
        let tools = try #require(toolDirectory(), "PostgreSQL's server is not installed: apt-get install postgresql")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("storefront-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data").path
        if geteuid() == 0 { try await run("/bin/chown", ["postgres:postgres", root.path]) }
        try await runAsServerUser("\(tools)/initdb", ["-D", data, "-U", "storefront", "-A", "trust", "--no-sync", "-E", "UTF8", "--no-locale"])
        // Ports below 32768 lie outside Linux's ephemeral range: no outgoing connection holds one.
        var started: PostgreSQLServer?
        for _ in 0..<5 where started == nil {
            let port = Int.random(in: 21000..<31000)
            let options = "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(root.path) -c fsync=off -c full_page_writes=off"
            if (try? await runAsServerUser("\(tools)/pg_ctl", ["-D", data, "-l", "\(root.path)/log", "-o", options, "-w", "-t", "30", "start"])) != nil {
                started = PostgreSQLServer(port: port)
            }
        }
        let server = try #require(started, "PostgreSQL did not start on any of five ports")
        let outcome: Result<Value, any Error>
        do { outcome = .success(try await body(server)) } catch { outcome = .failure(error) }
        try? await runAsServerUser("\(tools)/pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])  // whatever the body did
        return try outcome.get()
    }

    /// Where `initdb` and `pg_ctl` are: Debian's newest `/usr/lib/postgresql/<version>/bin`.
    static func toolDirectory() -> String? {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let newest = versions.compactMap(Int.init).max() else { return nil }
        let directory = "/usr/lib/postgresql/\(newest)/bin"
        return FileManager.default.isExecutableFile(atPath: "\(directory)/pg_ctl") ? directory : nil
    }

    /// Runs `tool` with `arguments` as the `postgres` user when we are root, else as ourselves.
    private static func runAsServerUser(_ tool: String, _ arguments: [String]) async throws {
        if geteuid() == 0 {
            try await run("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + arguments)
        } else {
            try await run(tool, arguments)
        }
    }

    /// Runs `executable` to its end (``Command``: Foundation's `Process` would wait for ever on
    /// a `pg_ctl start`, whose server keeps the socket it is watched by); throws when it fails.
    private static func run(_ executable: String, _ arguments: [String]) async throws {
        let result = try await Command.run(executable, arguments, timeout: .seconds(60))
        guard result.status == 0 else { throw ToolFailed(tool: executable, arguments: arguments, status: result.status) }
    }

    /// A tool that exited with a status other than 0.
    struct ToolFailed: Error, CustomStringConvertible {
        let tool: String
        let arguments: [String]
        let status: Int32
        var description: String { "\(tool) \(arguments.joined(separator: " ")) exited \(status)" }
    }
}
