import Foundation
import Glibc
import PostgreSQL
import Synchronization
import Testing

/// A throwaway PostgreSQL server on loopback: for one test (`with`), `initdb` into a fresh
/// directory, `pg_ctl start` on a port below the ephemeral range, stopped and deleted when
/// the body ends; or one for the whole test process (`withDatabase`), each test in a database
/// of its own.
/// As root (CI) the server runs as the `postgres` user (`runuser`), since PostgreSQL refuses to
/// run as root. Its one role, `storefront`, is trusted on loopback.
package struct PostgreSQLServer: Sendable {
    /// Its port on 127.0.0.1.
    package let port: Int

    /// The URL of its `postgres` database.
    package var url: String { "postgres://storefront@127.0.0.1:\(port)/postgres" }

    /// Runs `body` against a server started for it.
    package static func with<Value>(_ body: (PostgreSQLServer) async throws -> Value) async throws -> Value {
        let (server, root, stop) = try await start()
        defer { try? FileManager.default.removeItem(at: root) }
        let outcome: Result<Value, any Error>
        do { outcome = .success(try await body(server)) } catch { outcome = .failure(error) }
        try? await stop()  // whatever the body did
        return try outcome.get()
    }

    /// Runs `body` with the URL of a database created for it — on the server `Tests/run`
    /// started (`STOREFRONT_TEST_POSTGRES_URL`, the URL of its maintenance database), else on
    /// one this test process starts the first time it is asked and stops when it exits — and
    /// drops the database afterwards.
    package static func withDatabase<Value>(_ body: (String) async throws -> Value) async throws -> Value {
        let name = "test_" + UUID().uuidString.prefix(13).lowercased().replacing("-", with: "")
        let url = try await createDatabase(name)
        let outcome: Result<Value, any Error>
        do { outcome = .success(try await body(url)) } catch { outcome = .failure(error) }
        try? await dropDatabase(name)
        return try outcome.get()
    }

    /// Creates the database `name` (letters, digits, `_`) on the shared server (see
    /// ``withDatabase(_:)``) unless it exists, and returns its URL.
    package static func createDatabase(_ name: String) async throws -> String {
        let serverURL = try await sharedServerURL()
        let admin = try PostgreSQLConnection(url: serverURL)
        do {
            try admin.execute("CREATE DATABASE \(name)")
        } catch {
            guard error.sqlState == "42P04" else { throw error }  // 42P04: it exists already
        }
        return databaseURL(serverURL, database: name)
    }

    /// Drops the database `name` from the shared server, closing its connections.
    package static func dropDatabase(_ name: String) async throws {
        let admin = try PostgreSQLConnection(url: try await sharedServerURL())
        try admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// The URL of the test process's server's maintenance database.
    package static func sharedServerURL() async throws -> String {
        if let url = ProcessInfo.processInfo.environment["STOREFRONT_TEST_POSTGRES_URL"], !url.isEmpty { return url }
        return try await shared.value.url
    }

    /// `url` (`postgres://user@host:port/db`) with its database replaced by `database`.
    package static func databaseURL(_ url: String, database: String) -> String {
        guard let slash = url.range(of: "/", options: .backwards), url[..<slash.lowerBound].hasSuffix("//") == false else {
            return url + "/" + database
        }
        return url[..<slash.upperBound] + database
    }

    /// The server of this test process, started on first use and stopped at its exit.
    private static let shared = Task<PostgreSQLServer, any Error> {
        let (server, root, _) = try await start()
        SharedServerExit.register(dataDirectory: root.appendingPathComponent("data").path, root: root.path)
        return server
    }

    /// Starts a server in a new temporary directory; returns it, the directory and how to stop it.
    private static func start() async throws -> (PostgreSQLServer, URL, @Sendable () async throws -> Void) {
        let tools = try #require(toolDirectory(), "PostgreSQL's server is not installed: apt-get install postgresql")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("storefront-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let data = root.appendingPathComponent("data").path
        if geteuid() == 0 { try await run("/bin/chown", ["postgres:postgres", root.path]) }
        try await runAsServerUser("\(tools)/initdb", ["-D", data, "-U", "storefront", "-A", "trust", "--no-sync", "-E", "UTF8", "--no-locale"])
        // Ports below 32768 lie outside Linux's ephemeral range: no outgoing connection holds one.
        var started: PostgreSQLServer?
        for _ in 0..<5 where started == nil {
            let port = Int.random(in: 21000..<31000)
            let options = "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(root.path) -c fsync=off -c full_page_writes=off -c max_connections=1000"
            if (try? await runAsServerUser("\(tools)/pg_ctl", ["-D", data, "-l", "\(root.path)/log", "-o", options, "-w", "-t", "30", "start"])) != nil {
                started = PostgreSQLServer(port: port)
            }
        }
        let server = try #require(started, "PostgreSQL did not start on any of five ports")
        return (server, root, { try await runAsServerUser("\(tools)/pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]) })
    }

    /// Where `initdb` and `pg_ctl` are: Debian's newest `/usr/lib/postgresql/<version>/bin`.
    package static func toolDirectory() -> String? {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let newest = versions.compactMap(Int.init).max() else { return nil }
        let directory = "/usr/lib/postgresql/\(newest)/bin"
        return FileManager.default.isExecutableFile(atPath: "\(directory)/pg_ctl") ? directory : nil
    }

    /// Runs `tool` with `arguments` as the `postgres` user when we are root, else as ourselves.
    private static func runAsServerUser(_ tool: String, _ arguments: [String]) async throws {
        let (executable, all) = asServerUser(tool, arguments)
        try await run(executable, all)
    }

    /// The command line of `tool` with `arguments` run as the server's user: through
    /// `runuser -u postgres` when we are root.
    fileprivate static func asServerUser(_ tool: String, _ arguments: [String]) -> (String, [String]) {
        geteuid() == 0 ? ("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + arguments) : (tool, arguments)
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

/// Stops the test process's shared server when the process exits (`atexit`), on the exiting
/// thread (``Command/runBlocking(_:_:)``): no task runs any more by then.
private enum SharedServerExit {
    /// The shared server's data directory and its temporary root, once it started.
    static let server = Mutex<(dataDirectory: String, root: String)?>(nil)

    static func register(dataDirectory: String, root: String) {
        server.withLock { $0 = (dataDirectory, root) }
        atexit {
            guard let (data, root) = SharedServerExit.server.withLock({ $0 }), let tools = PostgreSQLServer.toolDirectory()
            else { return }
            let (executable, arguments) = PostgreSQLServer.asServerUser("\(tools)/pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
            Command.runBlocking(executable, arguments)
            try? FileManager.default.removeItem(atPath: root)
        }
    }
}

/// Which database the service suites run on: SQLite files (the default), or PostgreSQL when
/// `STOREFRONT_TEST_BACKEND=postgresql` (as `Tests/run` runs them a second time).
package enum TestBackend {
    /// Whether the suites run on PostgreSQL.
    package static var isPostgreSQL: Bool {
        ProcessInfo.processInfo.environment["STOREFRONT_TEST_BACKEND"] == "postgresql"
    }

    /// On PostgreSQL, the URL of a new database on the test server for one service (or a few
    /// sharing it, each in its own schema); nil on SQLite. Left to the test server's end.
    package static func newDatabaseURL() async throws -> String? {
        guard isPostgreSQL else { return nil }
        return try await PostgreSQLServer.createDatabase("service_" + UUID().uuidString.prefix(13).lowercased().replacing("-", with: ""))
    }
}
