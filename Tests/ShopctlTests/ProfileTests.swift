import ArgumentParser
import Contracts
import Foundation
import RPCHTTP2
import ServiceTestSupport
import Testing

@testable import shopctl
import RPC

/// Profiles: one backend's session, shipping address and gateway each; `config use` chooses
/// one; the default profile keeps the files where they always were.
@Suite("Profiles: --profile, SHOPCTL_PROFILE, config use/list/show, gateway precedence")
struct ProfileTests {
    private static let ada = StoredCredentials(accessToken: "a-1", refreshToken: "r-1", userId: "u-1", email: "ada@example.com")
    private static let bob = StoredCredentials(accessToken: "a-2", refreshToken: "r-2", userId: "u-2", email: "bob@example.com")

    /// `body` of the global options of `arguments` parsed as `health` would, in `environment`
    /// (evaluated there too: the options read the environment when asked).
    private func with<Result>(
        _ arguments: [String], environment: [String: String], _ body: (GlobalOptions) throws -> Result
    ) throws -> Result {
        let context = ProcessContext(environment: environment, readStandardInput: { Data() }, writeStandardOutput: { _ in })
        return try ProcessContext.$current.withValue(context) {
            let command = try #require(try Shopctl.parseAsRoot(GlobalOptions.hoisted(["health"] + arguments)) as? HealthCommand)
            return try body(command.global)
        }
    }

    /// The profile files `arguments` choose in `environment`.
    private func paths(_ arguments: [String], environment: [String: String]) throws -> ConfigPaths {
        try with(arguments, environment: environment) { try $0.paths }
    }

    /// The gateway `arguments` choose in `environment`.
    private func gateway(_ arguments: [String], environment: [String: String]) throws -> GatewayChoice {
        try with(arguments, environment: environment) { try $0.gatewayChoice() }
    }

    @Test("the default profile keeps today's files; a named one has its own under profiles/NAME, compose.json stays shared")
    func paths() throws {
        let environment = ["XDG_CONFIG_HOME": "/tmp/xdg"]
        let standard = ConfigPaths(environment: environment, profile: .default)
        #expect(standard.credentials.path == "/tmp/xdg/shopctl/credentials.json")
        #expect(standard.profile.path == "/tmp/xdg/shopctl/profile.json")
        let staging = ConfigPaths(environment: environment, profile: try ProfileName(validating: "staging"))
        #expect(staging.credentials.path == "/tmp/xdg/shopctl/profiles/staging/credentials.json")
        #expect(staging.credentialsLock.path == "/tmp/xdg/shopctl/profiles/staging/credentials.lock")
        #expect(staging.profile.path == "/tmp/xdg/shopctl/profiles/staging/profile.json")
        #expect(staging.composeRecord == standard.composeRecord)
        #expect(staging.settings == standard.settings)
    }

    @Test("order place fills the address from the shipping address saved in the profile in use")
    func shippingAddressFollowsTheProfile() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("shopctl-profile-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let environment = ["XDG_CONFIG_HOME": base.path]
        let work = ConfigPaths(environment: environment, profile: try ProfileName(validating: "work"))
        try ShippingProfile(paths: work).save(Address(name: "Ada", line1: "1 Work St", city: "London", postalCode: "N1", country: "GB"))
        try ShippingProfile(paths: ConfigPaths(environment: environment, profile: .default))
            .save(Address(name: "Ada", line1: "2 Home Rd", city: "London", postalCode: "N2", country: "GB"))
        let context = ProcessContext(environment: environment, readStandardInput: { Data() }, writeStandardOutput: { _ in })
        let card = ["--card", "4242424242424242", "--exp", "12/30", "--cvc", "123"]
        let lines = try ProcessContext.$current.withValue(context) {
            try [["--profile", "work"], []].map { profile in
                let command = try #require(
                    try Shopctl.parseAsRoot(GlobalOptions.hoisted(["order", "place"] + card + profile)) as? OrderCommand.Place)
                return try command.request().shippingAddress.line1
            }
        }
        #expect(lines == ["1 Work St", "2 Home Rd"])
    }

    @Test("profile names are a-z, 0-9, - and _, at most 40", arguments: ["", "Staging", "../etc", "a/b", "a b", String(repeating: "a", count: 41), "é"])
    func badNames(name: String) throws {
        #expect(throws: ShopctlError.self) { try ProfileName(validating: name) }
        #expect(throws: (any Error).self) { try paths(["--profile", name], environment: ["XDG_CONFIG_HOME": "/tmp/none"]) }
        #expect(throws: (any Error).self) {
            try paths([], environment: ["XDG_CONFIG_HOME": "/tmp/none", "SHOPCTL_PROFILE": name.isEmpty ? "-" : name])
        }
    }

    @Test("two profiles keep separate credentials, and --profile beats SHOPCTL_PROFILE beats the saved choice")
    func separateCredentials() throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-profiles")
        defer { try? FileManager.default.removeItem(at: root) }
        let environment = ["XDG_CONFIG_HOME": root.path]
        try CredentialsStore(paths: try paths([], environment: environment)).save(Self.ada)
        try CredentialsStore(paths: try paths(["--profile", "staging"], environment: environment)).save(Self.bob)

        #expect(try CredentialsStore(paths: paths([], environment: environment)).load() == Self.ada)
        #expect(try CredentialsStore(paths: paths(["--profile", "staging"], environment: environment)).load() == Self.bob)
        // The default profile's file is where shopctl always kept it.
        let legacy = root.appendingPathComponent("shopctl/credentials.json")
        #expect(try JSONDecoder().decode(StoredCredentials.self, from: Data(contentsOf: legacy)) == Self.ada)

        try ProfileSettings(currentProfile: "staging").save(base: root.appendingPathComponent("shopctl"))
        #expect(try paths([], environment: environment).profileName.rawValue == "staging")
        let chosen = environment.merging(["SHOPCTL_PROFILE": "default"]) { $1 }
        #expect(try paths([], environment: chosen).profileName == .default)
        #expect(try paths(["--profile", "ci"], environment: chosen).profileName.rawValue == "ci")
    }

    @Test("the gateway is --gateway, else SHOP_GATEWAY, else the profile's, else 127.0.0.1:8080")
    func gatewayPrecedence() throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-profiles")
        defer { try? FileManager.default.removeItem(at: root) }
        try ProfileSettings(currentProfile: "staging", gateways: ["staging": "staging.invalid:9000"])
            .save(base: root.appendingPathComponent("shopctl"))
        let bare = ["XDG_CONFIG_HOME": root.path]
        let withEnvironment = bare.merging(["SHOP_GATEWAY": "env.example:7000"]) { $1 }

        let flag = try gateway(["--gateway", "http://flag.example:6000"], environment: withEnvironment)
        #expect(flag == GatewayChoice(address: SocketAddressText(host: "flag.example", port: 6000), source: .flag))
        #expect(try gateway([], environment: withEnvironment).address.description == "env.example:7000")
        let saved = try gateway([], environment: bare)
        #expect(saved.address.description == "staging.invalid:9000" && saved.source.description == "profile staging")
        let fallback = try gateway(["--profile", "default"], environment: bare)
        #expect(fallback == GatewayChoice(address: SocketAddressText(host: "127.0.0.1", port: 8080), source: .builtIn))
    }

    @Test("the profile and gateway are chosen once, when the options are validated, not again from whatever environment reads them later")
    func chosenOnce() throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-profiles")
        defer { try? FileManager.default.removeItem(at: root) }
        try ProfileSettings(currentProfile: "staging", gateways: ["staging": "staging.invalid:9000"])
            .save(base: root.appendingPathComponent("shopctl"))
        let global = try with([], environment: ["XDG_CONFIG_HOME": root.path, "SHOP_GATEWAY": ""]) { $0 }
        // Read outside the environment it was parsed in.
        #expect(try global.paths == ConfigPaths(base: root.appendingPathComponent("shopctl"), profile: ProfileName(validating: "staging")))
        #expect(try global.gatewayChoice().address.description == "staging.invalid:9000")
    }

    @Test("with a config.json that is not settings, the paths are an error (exit 1) unless --profile or SHOPCTL_PROFILE gives the profile")
    func garbledSettingsPaths() throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-profiles")
        defer { try? FileManager.default.removeItem(at: root) }
        let base = root.appendingPathComponent("shopctl")
        try PrivateFile.write(Data("{garbled".utf8), to: ConfigPaths(base: base).settings)
        let environment = ["XDG_CONFIG_HOME": root.path, "SHOP_GATEWAY": ""]
        let error = #expect(throws: ShopctlError.self) { try paths([], environment: environment) }
        #expect(error?.status == .failure && error?.reason == "LOCAL_ERROR", "\(String(describing: error))")
        #expect(error?.message.hasSuffix("is not shopctl's settings file.") == true)
        let staging = try ProfileName(validating: "staging")
        let expected = ConfigPaths(base: base, profile: staging).credentials.path
        #expect(try paths(["--profile", "staging"], environment: environment).credentials.path == expected)
        #expect(try paths([], environment: environment.merging(["SHOPCTL_PROFILE": "staging"]) { $1 }).credentials.path == expected)
        // The gateway needs the file unless a flag or SHOP_GATEWAY gives it.
        #expect(throws: ShopctlError.self) { try gateway(["--profile", "staging"], environment: environment) }
        #expect(try gateway(["--profile", "staging", "--gateway", "10.0.0.1:9"], environment: environment).source == .flag)
    }

    @Test("the real shopctl: config use persists the profile and its gateway; list marks it and shows no token; show says why")
    func configUseListShow() async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-profiles")
        defer { try? FileManager.default.removeItem(at: root) }
        let shopctl = ShopctlRunner(configHome: root, gateway: "")
        let environment = ["SHOP_GATEWAY": ""]
        try CredentialsStore(paths: ConfigPaths(base: root.appendingPathComponent("shopctl"))).save(Self.ada)

        let use = try await shopctl.succeed(["config", "use", "staging", "--gateway", "http://staging.invalid:9000"], environment: environment)
        #expect(use.output == "Now using profile staging, gateway staging.invalid:9000.\n", "\(use)")
        let show = try await shopctl.succeed(["--json", "config", "show"], environment: environment)
        let shown = try JSONSerialization.jsonObject(with: Data(show.output.utf8)) as? [String: Any]
        #expect(shown?["profile"] as? String == "staging", "\(show)")
        #expect(shown?["gateway"] as? String == "staging.invalid:9000", "\(show)")
        #expect(shown?["gatewaySource"] as? String == "profile staging", "\(show)")

        let list = try await shopctl.succeed(["config", "list"], environment: environment)
        let rows = list.lines.dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows == [["default", "-", "ada@example.com"], ["*", "staging", "staging.invalid:9000", "-"]], "\(list)")
        #expect(!list.output.contains("a-1") && !list.output.contains("r-1"), "\(list)")

        // The next run calls the profile's gateway: it does not resolve, and says so.
        let call = try await shopctl.run(["categories"], environment: environment)
        #expect(call.errors.contains("staging.invalid"), "\(call)")

        try await shopctl.succeed(["config", "use", "default"], environment: environment)
        let back = try await shopctl.succeed(["--json", "config", "show"], environment: environment)
        #expect(back.output.contains(#""profile":"default""#) && back.output.contains(#""signedInAs":"ada@example.com""#), "\(back)")
        let refused = try await shopctl.run(["config", "use", "Bad/Name"], environment: environment)
        #expect(refused.status == 2 && refused.errors.hasPrefix("error: A profile name is 1 to 40"), "\(refused)")
    }
}
