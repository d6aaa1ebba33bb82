import ArgumentParser
import Foundation
import ServiceTestSupport
import Testing

@testable import shopctl

/// `config.json` as it may be found: not settings at all (every command that does not need it
/// still works, and `config use` repairs it), or changed by two `config use` at once.
@Suite("config.json: a garbled file, the lock of config use, and what overrides its choice")
struct ConfigFileTests {
    private static let ada = StoredCredentials(accessToken: "a-1", refreshToken: "r-1", userId: "u-1", email: "ada@example.com")

    /// Runs `body` with the real shopctl whose `config.json` holds `contents` (and whose
    /// gateway comes from no environment variable), removing its files afterwards.
    private func withShopctl(settings contents: String, _ body: (ShopctlRunner, URL) async throws -> Void) async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-config")
        defer { try? FileManager.default.removeItem(at: root) }
        let base = root.appendingPathComponent("shopctl")
        try PrivateFile.write(Data(contents.utf8), to: ConfigPaths(base: base).settings)
        try await body(ShopctlRunner(configHome: root, gateway: ""), base)
    }

    /// The garbled file every test here starts from.
    private static let garbled = "{\"currentProfile\": "

    @Test("config use replaces a garbled config.json, saying so on standard error, and exits 0")
    func useRepairs() async throws {
        try await withShopctl(settings: Self.garbled) { shopctl, base in
            let use = try await shopctl.run(["config", "use", "staging", "--gateway", "staging.invalid:9000"], environment: ["SHOP_GATEWAY": ""])
            #expect(use.status == 0, "\(use)")
            #expect(use.output == "Now using profile staging, gateway staging.invalid:9000.\n", "\(use)")
            #expect(use.errors.contains("is not shopctl's settings file. Replacing it with new settings."), "\(use)")
            #expect(try ProfileSettings.load(base: base) == ProfileSettings(currentProfile: "staging", gateways: ["staging": "staging.invalid:9000"]))
            let again = try await shopctl.run(["config", "use", "default"], environment: ["SHOP_GATEWAY": ""])
            #expect(again.status == 0 && again.errors.isEmpty, "\(again)")
        }
    }

    @Test("config list works with a garbled config.json: the profiles without gateways, and a note why")
    func listWithoutSettings() async throws {
        try await withShopctl(settings: Self.garbled) { shopctl, base in
            try CredentialsStore(paths: ConfigPaths(base: base)).save(Self.ada)
            let list = try await shopctl.run(["config", "list"], environment: ["SHOP_GATEWAY": ""])
            #expect(list.status == 0, "\(list)")
            let rows = list.lines.dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
            #expect(rows == [["default", "-", "ada@example.com"]], "\(list)")
            #expect(list.errors.contains("Listing the profiles without their gateways."), "\(list)")
        }
    }

    @Test("auth logout works with a garbled config.json: the default profile (or --profile's) is signed out, nothing revoked")
    func logoutWithoutSettings() async throws {
        try await withShopctl(settings: Self.garbled) { shopctl, base in
            let standard = CredentialsStore(paths: ConfigPaths(base: base))
            let staging = CredentialsStore(paths: ConfigPaths(base: base, profile: try ProfileName(validating: "staging")))
            try standard.save(Self.ada)
            try staging.save(Self.ada)

            let named = try await shopctl.run(["--profile", "staging", "auth", "logout"], environment: ["SHOP_GATEWAY": ""])
            #expect(named.status == 0, "\(named)")
            #expect(try staging.load() == nil && standard.load() == Self.ada)
            #expect(named.output.contains("could not revoke it on the server (the gateway is unknown: "), "\(named)")
            #expect(named.errors.isEmpty, "\(named)")

            let current = try await shopctl.run(["auth", "logout"], environment: ["SHOP_GATEWAY": ""])
            #expect(current.status == 0, "\(current)")
            #expect(try standard.load() == nil)
            #expect(current.errors.contains("Signing out of profile default; give --profile NAME for another."), "\(current)")
        }
    }

    @Test("a command that needs the garbled file fails as a local error (exit 1) in one sentence; one given --profile and --gateway does not need it")
    func commandsThatNeedIt() async throws {
        try await withShopctl(settings: Self.garbled) { shopctl, base in
            let needs = try await shopctl.run(["categories"], environment: ["SHOP_GATEWAY": ""])
            #expect(needs.status == 1, "\(needs)")
            #expect(
                needs.errors == "error: LOCAL_ERROR: \(ConfigPaths(base: base).settings.path) is not shopctl's settings file. "
                    + "(fix or delete it; `shopctl config use NAME` writes a new one)\n", "\(needs)")
            let port = try #require(try FreePorts.take(1).first)
            let given = try await shopctl.run(["--profile", "staging", "--gateway", "127.0.0.1:\(port)", "categories"], environment: ["SHOP_GATEWAY": ""])
            #expect(given.status == 5 && given.errors.contains("GATEWAY_UNREACHABLE"), "\(given)")
        }
    }

    @Test("a usage error with a hint reads as one sentence: no '.;'")
    func usagePunctuation() async throws {
        try await withShopctl(settings: "{}") { shopctl, _ in
            let refused = try await shopctl.run(["--profile", "No/Such", "health"])
            #expect(refused.status == 2, "\(refused)")
            #expect(refused.errors.contains("(got 'No/Such'); see the profiles with `shopctl config list`"), "\(refused)")
            #expect(!refused.errors.contains(".;"), "\(refused)")
        }
    }

    @Test("config use notes a SHOP_GATEWAY that overrides the profile's gateway, as it notes SHOPCTL_PROFILE")
    func useNotesGatewayOverride() async throws {
        try await withShopctl(settings: "{}") { shopctl, _ in
            let overridden = try await shopctl.run(
                ["config", "use", "staging", "--gateway", "staging.invalid:9000"], environment: ["SHOP_GATEWAY": "http://other.invalid:7000"])
            #expect(overridden.status == 0, "\(overridden)")
            #expect(overridden.errors.contains("note: SHOP_GATEWAY=other.invalid:7000 is set, and takes precedence"), "\(overridden)")
            let same = try await shopctl.run(["config", "use", "staging"], environment: ["SHOP_GATEWAY": "staging.invalid:9000"])
            #expect(same.errors.isEmpty, "\(same)")
        }
    }

    @Test("config use waits for config.lock, so that two at once cannot lose a change")
    func useHoldsTheLock() async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-config")
        defer { try? FileManager.default.removeItem(at: root) }
        let base = root.appendingPathComponent("shopctl")
        let environment = ["XDG_CONFIG_HOME": root.path, "SHOP_GATEWAY": ""]
        let lock = try await FileLock.acquire(ConfigPaths(base: base).settingsLock, timeout: .seconds(5))
        let use = Task { try await Self.runUse(["config", "use", "staging"], environment: environment) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(!FileManager.default.fileExists(atPath: ConfigPaths(base: base).settings.path), "wrote while another held the lock")
        lock.release()
        try await use.value
        #expect(try ProfileSettings.load(base: base).currentProfile == "staging")

        // Many at once: every profile's gateway is kept.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for number in 1...12 {
                group.addTask {
                    try await Self.runUse(["config", "use", "p\(number)", "--gateway", "h\(number).invalid:\(number)"], environment: environment)
                }
            }
            try await group.waitForAll()
        }
        #expect(try ProfileSettings.load(base: base).gateways.count == 12)
    }

    /// Runs `config use` in this process, as the executable would, in `environment`.
    private static func runUse(_ arguments: [String], environment: [String: String]) async throws {
        let context = ProcessContext(environment: environment, readStandardInput: { Data() }, writeStandardOutput: { _ in })
        try await ProcessContext.$current.withValue(context) {
            let command = try #require(try Shopctl.parseAsRoot(GlobalOptions.hoisted(arguments)) as? ConfigCommand.Use)
            try await command.run()
        }
    }
}
