import Credentials
import Foundation
import RPCHTTP2
import ServiceTestSupport
import Testing
import RPC

/// Runs `body` against a freshly launched `auth-svc` with its own empty data directory, then
/// stops the process (SIGTERM) and removes the directory, whether `body` succeeded or not.
///
/// The service holds one of ``serviceProcessSlots`` while it runs.
@discardableResult
func withAuthService<Result>(
    extraArguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (AuthServiceProcess) async throws -> Result
) async throws -> Result {
    try await serviceProcessSlots.run(
        launch: { try await AuthServiceProcess.launch(extraArguments: extraArguments, sourceLocation: sourceLocation) },
        report: { service, error in "auth-svc log tail after \(error):\n\(service.log.tail())\n" },
        shutDown: { await $0.stop() }, body)
}

/// One running `auth-svc` executable, configured as the tests need: an OS-chosen port, a
/// temporary data directory, cheap scrypt, the test providers' key sets, a signing key the
/// tests know (so they can mint expired or mis-addressed tokens with a valid signature) and a
/// random internal API key.
///
/// Thread-safe: every stored property is immutable and `Sendable`.
final class AuthServiceProcess: Sendable {
    /// The issuer of access tokens (README default).
    static let issuer = "storefront-auth"
    /// The audience of access tokens (README default).
    static let audience = "storefront"
    /// The gateway's public URL (`--public-url`): the base of links in emails.
    static let linkBaseURL = "http://shop.test"

    /// The data directory (`--data-dir`), removed when the service stops.
    let dataDirectory: URL
    /// The key of `SessionRevocationService` (`SHOP_INTERNAL_API_KEY`).
    let internalAPIKey: String
    /// The key the service signs access tokens with (`--signing-key`).
    let signingKey: SigningKey
    /// The process.
    let service: ServiceProcess

    private init(dataDirectory: URL, internalAPIKey: String, signingKey: SigningKey, service: ServiceProcess) {
        self.dataDirectory = dataDirectory
        self.internalAPIKey = internalAPIKey
        self.signingKey = signingKey
        self.service = service
    }

    /// The port the service listens on.
    var port: Int { service.port }
    /// A client connected to the service.
    var client: RPCClient { service.client }
    /// The service's log (standard error).
    var log: ProcessLog { service.log }
    /// Whether the process is still running.
    var isRunning: Bool { service.isRunning }

    /// Writes the configuration files, starts the executable (with `extraArguments` after the
    /// standard ones) and waits for its `listening` line.
    static func launch(extraArguments: [String] = [], sourceLocation: SourceLocation) async throws -> AuthServiceProcess {
        let directory = try TestScratch.makeDirectory(prefix: "auth-svc-tests")
        do {
            let keySets = try IdentityProviderKeys.shared.get().writeKeySets(into: directory)
            let signingKey = try SigningKey.generate()
            let keyFile = directory.appendingPathComponent("signing-key.json")
            try signingKey.save(to: keyFile.path)
            let apiKey = TestScratch.randomKey()
            let service = try await ServiceProcess.launch(
                "auth-svc",
                arguments: [
                    "--port", "0", "--data-dir", directory.path, "--log-level", "info", "--grace-seconds", "2",
                    "--scrypt-log-n", "10", "--signing-key", keyFile.path,
                    "--google-client-id", IDTokens.googleClientID, "--google-jwks", keySets.google.path,
                    "--apple-client-id", IDTokens.appleClientID, "--apple-jwks", keySets.apple.path,
                    "--public-url", linkBaseURL,
                ] + extraArguments,
                environment: ["SHOP_INTERNAL_API_KEY": apiKey], sourceLocation: sourceLocation)
            return AuthServiceProcess(
                dataDirectory: directory, internalAPIKey: apiKey, signingKey: signingKey, service: service)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// Closes the client, sends SIGTERM, waits for the exit (SIGKILL after 6 s) and removes
    /// the data directory; returns the exit status, or nil when it had to be killed. Later calls
    /// only report.
    @discardableResult
    func stop() async -> Int32? {
        await service.closeClient()
        let status = await service.stop(patience: .seconds(6))
        try? FileManager.default.removeItem(at: dataDirectory)
        return status
    }
}
