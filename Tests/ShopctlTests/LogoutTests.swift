import Contracts
import Foundation
import ServiceTestSupport
import Testing

@testable import shopctl

/// `auth logout` works offline: it always drops the saved session, revokes it when the
/// gateway answers, says which happened, and exits 0 either way.
@Suite("auth logout: offline too")
struct LogoutTests {
    @Test("with the gateway down, the real shopctl deletes the credentials, says it could not revoke them, exits 0")
    func gatewayDown() async throws {
        let home = try TestScratch.makeDirectory(prefix: "shopctl-logout")
        defer { try? FileManager.default.removeItem(at: home) }
        let port = try #require(try FreePorts.take(1).first)
        let shopctl = ShopctlRunner(configHome: home, gateway: "127.0.0.1:\(port)")
        let store = CredentialsStore(paths: ConfigPaths(environment: ["XDG_CONFIG_HOME": home.path]))
        try store.save(StoredCredentials(Session.sample(access: "access-0", refresh: "refresh-0")))

        let result = try await shopctl.run(["auth", "logout"])
        #expect(result.status == 0, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: shopctl.credentialsFile.path))
        #expect(
            result.output.hasPrefix("Signed out here: deleted the saved session, but could not revoke it on the server ("),
            "\(result)")
        #expect(result.output.contains("127.0.0.1:\(port)"), "names the gateway it could not reach: \(result)")
        #expect(result.output.hasSuffix("so it stays valid there until it expires.\n"))
        #expect(result.errors.isEmpty, "\(result)")

        let again = try await shopctl.run(["auth", "logout"])
        #expect(again.status == 0)
        #expect(again.output == "Not signed in.\n")
    }

    @Test("a credentials file that cannot be read is deleted, saying so, and the real shopctl exits 0")
    func unreadableCredentials() async throws {
        let home = try TestScratch.makeDirectory(prefix: "shopctl-logout")
        defer { try? FileManager.default.removeItem(at: home) }
        let port = try #require(try FreePorts.take(1).first)
        let shopctl = ShopctlRunner(configHome: home, gateway: "127.0.0.1:\(port)")
        try PrivateFile.write(Data("not credentials".utf8), to: shopctl.credentialsFile)

        let result = try await shopctl.run(["auth", "logout"])
        #expect(result.status == 0, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: shopctl.credentialsFile.path))
        #expect(
            result.output == "Signed out here: deleted \(shopctl.credentialsFile.path), which could not be read, so no session was revoked on the server.\n",
            "\(result)")
        #expect(result.errors.isEmpty, "\(result)")
        #expect(try await shopctl.run(["auth", "logout"]).output == "Not signed in.\n")
    }

    @Test("says what each outcome leaves: revoked, or deleted here only (and, with --all, the other sessions alive)")
    func messages() {
        #expect(AuthCommand.Logout.message(all: false, unrevoked: nil) == "Signed out.")
        #expect(AuthCommand.Logout.message(all: true, unrevoked: nil) == "Signed out everywhere.")
        let here = AuthCommand.Logout.message(all: true, unrevoked: "Connection refused.")
        #expect(here.contains("could not revoke it on the server (Connection refused)"))
        #expect(here.contains("your other sessions stay signed in"))
    }
}
