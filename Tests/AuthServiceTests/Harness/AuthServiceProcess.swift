import Credentials
import Foundation
import RPCHTTP2
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` against a freshly launched `auth-svc` with its own empty data directory, then
/// stops the process (SIGTERM) and removes the directory, whether `body` succeeded or not.
///
/// At most ``ServiceSlots/limit`` services run at once, so a parallel test run does not
/// starve two cores.
@discardableResult
func withAuthService<Result>(
    extraArguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (AuthServiceProcess) async throws -> Result
) async throws -> Result {
    await ServiceSlots.shared.acquire()
    let service: AuthServiceProcess
    do {
        service = try await AuthServiceProcess.launch(extraArguments: extraArguments, sourceLocation: sourceLocation)
    } catch {
        await ServiceSlots.shared.release()
        throw error
    }
    do {
        let result = try await body(service)
        await service.stop()
        await ServiceSlots.shared.release()
        return result
    } catch {
        // The thrown error is the test's failure; the service's own account helps explain it.
        let report = "auth-svc log tail after \(error):\n\(service.log.tail())\n"
        FileHandle.standardError.write(Data(report.utf8))
        await service.stop()
        await ServiceSlots.shared.release()
        throw error
    }
}

/// One running `auth-svc` executable, configured as the tests need: an OS-chosen port, a
/// temporary data directory, cheap scrypt, the test providers' key sets, a signing key the
/// tests know (so they can mint expired or mis-addressed tokens with a valid signature) and a
/// random internal API key.
///
/// Thread-safe. `@unchecked` only because of `process`, which is used solely through
/// `Process`'s thread-safe operations (isRunning, terminate, the pid, the exit status); every
/// other stored property is immutable and `Sendable`.
final class AuthServiceProcess: @unchecked Sendable {
    /// The issuer of access tokens (README default).
    static let issuer = "storefront-auth"
    /// The audience of access tokens (README default).
    static let audience = "storefront"
    /// The base of links in emails.
    static let linkBaseURL = "http://shop.test"

    /// The built executable, next to the test bundle.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("auth-svc")
    }

    /// The data directory (`--data-dir`), removed when the service stops.
    let dataDirectory: URL
    /// The port the service listens on.
    let port: Int
    /// The key of `SessionRevocationService` (`SHOP_INTERNAL_API_KEY`).
    let internalAPIKey: String
    /// The key the service signs access tokens with (`--signing-key`).
    let signingKey: SigningKey
    /// A client connected to the service.
    let client: RPCClient
    /// The service's log (standard error).
    let log: ProcessLog
    private let process: Process
    /// Whether `stop()` has begun, so that a second call does nothing.
    private let stopping = Mutex(false)

    private init(
        dataDirectory: URL, port: Int, internalAPIKey: String, signingKey: SigningKey, client: RPCClient,
        log: ProcessLog, process: Process
    ) {
        self.dataDirectory = dataDirectory
        self.port = port
        self.internalAPIKey = internalAPIKey
        self.signingKey = signingKey
        self.client = client
        self.log = log
        self.process = process
    }

    /// Writes the configuration files, starts the executable (with `extraArguments` after the
    /// standard ones) and waits for its `listening` line.
    static func launch(extraArguments: [String] = [], sourceLocation: SourceLocation) async throws -> AuthServiceProcess {
        try #require(
            FileManager.default.isExecutableFile(atPath: executable.path),
            "build it first: swift build --product auth-svc (\(executable.path))", sourceLocation: sourceLocation)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-svc-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keys = try ProviderKeys.shared.get()
        let googleJWKS = directory.appendingPathComponent("google-jwks.json")
        let appleJWKS = directory.appendingPathComponent("apple-jwks.json")
        try keys.googleKeySet().write(to: googleJWKS)
        try keys.appleKeySet().write(to: appleJWKS)
        let signingKey = try SigningKey.generate()
        let keyFile = directory.appendingPathComponent("signing-key.json")
        try signingKey.save(to: keyFile.path)
        let apiKey = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()

        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "--port", "0", "--data-dir", directory.path, "--log-level", "info", "--grace-seconds", "2",
            "--scrypt-log-n", "10", "--signing-key", keyFile.path,
            "--google-client-id", IDTokens.googleClientID, "--google-jwks", googleJWKS.path,
            "--apple-client-id", IDTokens.appleClientID, "--apple-jwks", appleJWKS.path,
            "--link-base-url", linkBaseURL,
        ] + extraArguments
        // Only our configuration: a SHOP_* variable of the developer's shell must not leak in.
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SHOP_") }
        environment["SHOP_INTERNAL_API_KEY"] = apiKey
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let log = ProcessLog(reading: errors.fileHandleForReading)

        let port = await log.firstMatch(within: .seconds(30)) { line -> Int? in
            guard line.contains("listening"),
                let range = line.range(of: #"address=[^ ]+:[0-9]+"#, options: .regularExpression)
            else { return nil }
            return Int(line[range].split(separator: ":").last ?? "")
        }
        guard let port else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
            Issue.record("auth-svc never logged its address:\n\(log.tail())", sourceLocation: sourceLocation)
            throw HarnessError.didNotStart
        }
        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
        return AuthServiceProcess(
            dataDirectory: directory, port: port, internalAPIKey: apiKey, signingKey: signingKey, client: client,
            log: log, process: process)
    }

    /// Whether the process is still running.
    var isRunning: Bool { process.isRunning }

    /// Closes the client, sends SIGTERM, waits for the exit (SIGKILL after 6 s) and removes
    /// the data directory; returns the exit status, or nil when it had to be killed.
    @discardableResult
    func stop() async -> Int32? {
        let first = stopping.withLock { stopping in
            defer { stopping = true }
            return !stopping
        }
        guard first else {
            return process.isRunning ? nil : process.terminationStatus
        }
        await client.close()
        if process.isRunning { process.terminate() }
        let deadline = ContinuousClock.now + .seconds(6)
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        var status: Int32?
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        } else {
            status = process.terminationStatus
        }
        try? FileManager.default.removeItem(at: dataDirectory)
        return status
    }
}

/// Why the harness could not provide a service.
enum HarnessError: Error {
    /// The process exited or stayed silent instead of logging its address.
    case didNotStart
}

/// Bounds how many auth-svc processes run at once. An actor: safe from any task.
actor ServiceSlots {
    /// The most services running at a time.
    static let limit = 4
    /// The slots every test shares.
    static let shared = ServiceSlots()

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
