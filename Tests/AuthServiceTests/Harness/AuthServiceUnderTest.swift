import Credentials
import Foundation
import InProcessServices
import RPCHTTP2
import ServiceTestSupport
import Testing
import RPC

/// Runs `body` against a fresh auth-svc built in this process (``withInProcessStack(_:options:_:)``)
/// with its own empty data directory (and, on PostgreSQL, database), configured as
/// ``withLiveAuthService(extraArguments:sourceLocation:_:)`` configures the process; closes it
/// and removes its files whether `body` succeeded or not. On PostgreSQL it holds one of
/// ``postgreSQLServiceSlots`` meanwhile.
@discardableResult
func withAuthService<Result>(_ body: (AuthServiceUnderTest) async throws -> Result) async throws -> Result {
    guard TestBackend.isPostgreSQL else { return try await withInProcessAuthService(body) }
    return try await postgreSQLServiceSlots.withSlots { try await withInProcessAuthService(body) }
}

/// Bounds how many in-process auth-svc run at once when the suites run on PostgreSQL: each
/// holds a pool of connections (`DatabaseOptions.postgreSQLConnectionCount`) to the test
/// process's shared server, and every test of the suites starting at once would open more
/// than its `max_connections` allows.
let postgreSQLServiceSlots = ConcurrencySlots(limit: 24)

/// ``withAuthService(_:)`` without the bound.
private func withInProcessAuthService<Result>(_ body: (AuthServiceUnderTest) async throws -> Result) async throws -> Result {
    let files = try AuthServiceUnderTest.Files.make()
    defer { try? FileManager.default.removeItem(at: files.directory) }
    let options = InProcessAuthOptions(
        signingKeyPath: files.signingKeyPath, linkBaseURL: AuthServiceUnderTest.linkBaseURL,
        google: IdentityProviderOption(clientIDs: [IDTokens.googleClientID], jwks: files.googleJWKS),
        apple: IdentityProviderOption(clientIDs: [IDTokens.appleClientID], jwks: files.appleJWKS))
    return try await withInProcessStack([.auth], options: InProcessOptions(auth: options)) { stack in
        try await body(
            AuthServiceUnderTest(
                dataDirectory: stack.dataDirectory(.auth), databaseURL: try await stack.databaseURL(),
                internalAPIKey: stack.internalKey, signingKey: files.signingKey, client: try stack.client(.auth), process: nil,
                stack: stack))
    }
}

/// Runs `body` against a freshly launched `auth-svc` process with its own empty data
/// directory, then stops the process (SIGTERM) and removes the directory, whether `body`
/// succeeded or not: for what only the process shows (its flags, signals, log lines, SMTP).
///
/// The service holds one of ``serviceProcessSlots`` while it runs.
@discardableResult
func withLiveAuthService<Result>(
    extraArguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (AuthServiceUnderTest) async throws -> Result
) async throws -> Result {
    try await serviceProcessSlots.run(
        launch: { try await AuthServiceUnderTest.launch(extraArguments: extraArguments, sourceLocation: sourceLocation) },
        report: { service, error in "auth-svc log tail after \(error):\n\(service.logTail)\n" },
        shutDown: { await $0.stop() }, body)
}

/// One auth-svc, in this process or as a running `auth-svc` executable, configured as the
/// tests need: a temporary data directory, cheap scrypt, the test providers' key sets, a
/// signing key the tests know (so they can mint expired or mis-addressed tokens with a valid
/// signature) and a random internal API key.
///
/// Thread-safe: every stored property is immutable and `Sendable`.
final class AuthServiceUnderTest: Sendable {
    /// The issuer of access tokens (README default).
    static let issuer = "storefront-auth"
    /// The audience of access tokens (README default).
    static let audience = "storefront"
    /// The gateway's public URL (`--public-url`): the base of links in emails.
    static let linkBaseURL = "http://shop.test"

    /// The data directory (`--data-dir`), removed when the service stops.
    let dataDirectory: URL
    /// The PostgreSQL database the service keeps its data in (schema `auth`) when the suites
    /// run on PostgreSQL (``TestBackend``); nil on SQLite (`auth.sqlite` in the data directory).
    let databaseURL: String?
    /// The key of `SessionRevocationService` (`SHOP_INTERNAL_API_KEY`).
    let internalAPIKey: String
    /// The key the service signs access tokens with (`--signing-key`).
    let signingKey: SigningKey
    /// A client of the service.
    let client: RPCClient
    /// The process, when the service runs as one.
    let process: ServiceProcess?
    /// The in-process stack holding the service, when it runs in this process.
    private let stack: ServiceStack?

    fileprivate init(
        dataDirectory: URL, databaseURL: String?, internalAPIKey: String, signingKey: SigningKey, client: RPCClient,
        process: ServiceProcess?, stack: ServiceStack? = nil
    ) {
        self.dataDirectory = dataDirectory
        self.databaseURL = databaseURL
        self.internalAPIKey = internalAPIKey
        self.signingKey = signingKey
        self.client = client
        self.process = process
        self.stack = stack
    }

    /// What the service's `/metrics` serves now: fetched from the process's port, or read from
    /// the registry of the service in this process.
    func metrics() async throws -> MetricsScrape {
        if let process { return try await MetricsScrape.fetch(port: process.port) }
        guard let stack else { throw StackError.notInProcess("auth-svc") }
        return try stack.metrics(of: .auth)
    }

    /// The process's log (standard error); throws when the service runs in this process.
    var log: ProcessLog {
        get throws {
            guard let process else { throw StackError.notAProcess("auth-svc") }
            return process.log
        }
    }

    /// The last log lines of the process, for failure reports.
    var logTail: String { process?.log.tail() ?? "" }

    /// The files the service is configured with beside its data directory: the signing key
    /// and the identity providers' key sets.
    struct Files {
        /// The directory holding them.
        let directory: URL
        /// The signing key.
        let signingKey: SigningKey
        /// The signing key's file.
        let signingKeyPath: String
        /// The Google JWK Set's file.
        let googleJWKS: String
        /// The Apple JWK Set's file.
        let appleJWKS: String

        /// Writes them into a new temporary directory.
        static func make() throws -> Files {
            let directory = try TestScratch.makeDirectory(prefix: "auth-svc-files")
            do {
                return try write(into: directory)
            } catch {
                try? FileManager.default.removeItem(at: directory)
                throw error
            }
        }

        /// Writes them into `directory`.
        static func write(into directory: URL) throws -> Files {
            let keySets = try IdentityProviderKeys.shared.get().writeKeySets(into: directory)
            let signingKey = try SigningKey.generate()
            let keyFile = directory.appendingPathComponent("signing-key.json")
            try signingKey.save(to: keyFile.path)
            return Files(
                directory: directory, signingKey: signingKey, signingKeyPath: keyFile.path, googleJWKS: keySets.google.path,
                appleJWKS: keySets.apple.path)
        }
    }

    /// Writes the configuration files, starts the executable (with `extraArguments` after the
    /// standard ones; on PostgreSQL with a database of its own, ``TestBackend``) and waits for
    /// its `listening` line.
    static func launch(extraArguments: [String] = [], sourceLocation: SourceLocation) async throws -> AuthServiceUnderTest {
        let directory = try TestScratch.makeDirectory(prefix: "auth-svc-tests")
        let databaseName = TestBackend.isPostgreSQL ? Self.databaseName(for: directory) : nil
        do {
            let files = try Files.write(into: directory)
            let apiKey = TestScratch.randomKey()
            var environment = ["SHOP_INTERNAL_API_KEY": apiKey]
            var databaseURL: String?
            if let databaseName {
                databaseURL = try await PostgreSQLServer.createDatabase(databaseName)
                environment["SHOP_DATABASE_URL"] = databaseURL
            }
            let service = try await ServiceProcess.launch(
                "auth-svc",
                arguments: [
                    "--port", "0", "--data-dir", directory.path, "--log-level", "info", "--grace-seconds", "2",
                    "--scrypt-log-n", "10", "--signing-key", files.signingKeyPath,
                    "--google-client-id", IDTokens.googleClientID, "--google-jwks", files.googleJWKS,
                    "--apple-client-id", IDTokens.appleClientID, "--apple-jwks", files.appleJWKS,
                    "--public-url", linkBaseURL,
                ] + extraArguments,
                environment: environment, sourceLocation: sourceLocation)
            return AuthServiceUnderTest(
                dataDirectory: directory, databaseURL: databaseURL, internalAPIKey: apiKey, signingKey: files.signingKey,
                client: service.client, process: service)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            if let databaseName { try? await PostgreSQLServer.dropDatabase(databaseName) }
            throw error
        }
    }

    /// The name of the PostgreSQL database of the process whose data directory is `directory`:
    /// unique as the directory is, and derived from it so that ``stop()`` finds it.
    private static func databaseName(for directory: URL) -> String {
        "auth_live_" + String(directory.lastPathComponent.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// Runs `sql` against the service's own database from outside, as an operator would: with
    /// the `sqlite3` shell on `auth.sqlite` (WAL mode lets a second process write), or with
    /// `psql` in the schema `auth` on PostgreSQL. Returns what it printed (unaligned, no
    /// headers: one line per row, columns separated by `|`).
    @discardableResult
    func runSQL(_ sql: String) async throws -> String {
        let shell: Command.Result
        if let databaseURL {
            shell = try await Command.run(
                "psql", [databaseURL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", "SET search_path TO auth", "-c", sql],
                timeout: .seconds(30))
            try #require(shell.status == 0, "psql failed; is it installed (Debian postgresql-client)? \(shell)")
        } else {
            let database = dataDirectory.appendingPathComponent("auth.sqlite").path
            shell = try await Command.run("sqlite3", ["-cmd", ".timeout 5000", database, sql], timeout: .seconds(30))
            try #require(shell.status == 0, "sqlite3 failed; is it installed (Debian sqlite3)? \(shell)")
        }
        return shell.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the process: closes the client, sends SIGTERM, waits for the exit (SIGKILL after
    /// 6 s) and removes the data directory; returns the exit status, or nil when it had to be
    /// killed or runs in this process. Later calls only report.
    @discardableResult
    func stop() async -> Int32? {
        guard let process else { return nil }
        await process.closeClient()
        let status = await process.stop(patience: .seconds(6))
        if databaseURL != nil { try? await PostgreSQLServer.dropDatabase(Self.databaseName(for: dataDirectory)) }
        try? FileManager.default.removeItem(at: dataDirectory)
        return status
    }
}
