import ArgumentParser
import Foundation
import RPCHTTP2

/// `shopctl config`: profiles — one backend's session, shipping address and gateway address
/// each, as `firebase use` keeps one project's — and which one commands use.
struct ConfigCommand: AsyncParsableCommand {
    /// The command's name, help and subcommands.
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Choose the profile (session and gateway) commands use, and list profiles.",
        discussion: """
            Examples:
              shopctl config use staging --gateway shop-staging.example.net:8080
              shopctl config use default
              shopctl config list
              shopctl --profile staging auth login --email ada@example.com

            A command uses --profile, else SHOPCTL_PROFILE, else the profile chosen here, else
            `default`; its gateway is --gateway, else SHOP_GATEWAY, else the profile's, else
            127.0.0.1:8080. The default profile's files stay in the config directory itself;
            another profile's are in profiles/NAME/ under it.
            """,
        subcommands: [Use.self, List.self, Show.self])

    /// `shopctl config use NAME [--gateway ADDRESS]`.
    struct Use: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "use", abstract: "Make NAME the profile commands use, and set its gateway with --gateway.")

        /// The profile to use.
        @Argument(help: "Profile name: a-z, 0-9, '-' and '_', at most 40 characters; `default` for the original one.")
        var name: String
        /// `--gateway` (saved as the profile's), `--json`.
        @OptionGroup var global: GlobalOptions

        /// Refuses a malformed name and `--profile` (the name is the argument).
        func validate() throws {
            do throws(ShopctlError) {
                _ = try ProfileName(validating: name)
            } catch {
                throw ValidationError(error.message)
            }
            guard global.profile == nil else {
                throw ValidationError("`config use` takes the profile as its argument, not --profile.")
            }
        }

        /// Saves the choice (and the gateway) and says what commands will use.
        func run() async throws {
            let profile = try ProfileName(validating: name)
            let base = ConfigPaths.base(environment: ProcessContext.current.environment)
            var settings = try ProfileSettings.load(base: base)
            settings.currentProfile = profile.isDefault ? nil : profile.rawValue
            if let gateway = global.gatewayFlag {
                settings.gateways[profile.rawValue] = try GatewayAddress.parse(gateway).description
            }
            try settings.save(base: base)
            let gateway = settings.gateway(of: profile) ?? "\(GlobalOptions.defaultGateway) (none saved)"
            let output = Output(json: global.json)
            output.message(try ConfigJSON.encode(ProfileEntry(name: profile, settings: settings, base: base, current: profile))) {
                "Now using profile \(profile), gateway \(gateway)."
            }
            if let chosen = ProcessContext.current.environment[ProfileName.environmentVariable], !chosen.isEmpty,
                chosen != profile.rawValue
            {
                Output.error("note: SHOPCTL_PROFILE=\(chosen) is set, and takes precedence in this environment.")
            }
        }
    }

    /// `shopctl config list`.
    struct List: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the profiles, the one in use marked *, with their gateways and who is signed in.")

        /// `--profile` (marked as in use), `--json`.
        @OptionGroup var global: GlobalOptions

        /// Prints one line per profile (with `--json`, one JSON document per profile).
        func run() async throws {
            let current = try global.resolvePaths()
            let settings = try ProfileSettings.load(base: current.base)
            let entries = ProfileEntry.all(settings: settings, base: current.base, current: current.profileName)
            let output = Output(json: global.json)
            if output.json {
                for entry in entries { output.line(String(decoding: try ConfigJSON.encode(entry), as: UTF8.self)) }
                return
            }
            var table = Table([.init(""), .init("PROFILE"), .init("GATEWAY"), .init("SIGNED IN", shrinks: true)])
            for entry in entries {
                table.append([entry.current ? "*" : "", entry.name, entry.gateway ?? "-", entry.signedInAs ?? "-"])
            }
            output.line(table.render())
        }
    }

    /// `shopctl config show`.
    struct Show: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show the profile in use, the gateway it calls and why, and its files.")

        /// `--profile`, `--gateway`, `--json`.
        @OptionGroup var global: GlobalOptions

        /// Prints the profile, the gateway and its source, the directory and the signed-in email.
        func run() async throws {
            let paths = try global.resolvePaths()
            let choice = try global.gatewayChoice()
            let signedIn = try? CredentialsStore(paths: paths).load()
            let shown = ShownConfig(
                profile: paths.profileName.rawValue, gateway: choice.address.description, gatewaySource: choice.source.description,
                directory: paths.directory.path, signedInAs: signedIn?.email)
            Output(json: global.json).message(try ConfigJSON.encode(shown)) {
                HumanText.fields([
                    ("Profile", shown.profile), ("Gateway", "\(shown.gateway) (from \(shown.gatewaySource))"),
                    ("Files", shown.directory), ("Signed in", shown.signedInAs ?? "no"),
                ])
            }
        }
    }
}

/// One profile as `config list` and `config use` show it: never a token.
struct ProfileEntry: Encodable, Sendable, Equatable {
    /// The profile's name.
    let name: String
    /// Its saved gateway address; nil when it has none (127.0.0.1:8080 applies).
    let gateway: String?
    /// Whether commands use it now.
    let current: Bool
    /// The email of its stored session; nil when it has none.
    let signedInAs: String?

    /// The entry of `name`.
    init(name: ProfileName, settings: ProfileSettings, base: URL, current: ProfileName) {
        self.name = name.rawValue
        gateway = settings.gateway(of: name)
        self.current = name == current
        signedInAs = (try? CredentialsStore(paths: ConfigPaths(base: base, profile: name)).load())?.email
    }

    /// Every profile under `base`, sorted, `default` first: `default`, those with a saved
    /// gateway, those with a directory under `profiles/`, and `current`.
    static func all(settings: ProfileSettings, base: URL, current: ProfileName) -> [ProfileEntry] {
        let directories = (try? FileManager.default.contentsOfDirectory(atPath: base.appendingPathComponent("profiles").path)) ?? []
        let names = Set((Array(settings.gateways.keys) + directories).compactMap { try? ProfileName(validating: $0) })
            .union([.default, current])
        return names.sorted { ($0.isDefault ? 0 : 1, $0) < ($1.isDefault ? 0 : 1, $1) }
            .map { ProfileEntry(name: $0, settings: settings, base: base, current: current) }
    }
}

/// What `config show` prints.
struct ShownConfig: Encodable, Sendable {
    /// The profile in use.
    let profile: String
    /// The gateway's address.
    let gateway: String
    /// Which setting chose it: `--gateway`, `SHOP_GATEWAY`, `profile NAME` or `default`.
    let gatewaySource: String
    /// The profile's directory.
    let directory: String
    /// The email of the stored session; nil when signed out.
    let signedInAs: String?
}

/// The JSON of `config` commands' output: one document, keys sorted.
enum ConfigJSON {
    /// `value` as one line of JSON.
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}
