import ArgumentParser
import Foundation
import RPC

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
            let paths = ConfigPaths(base: try global.resolved().base, profile: profile)
            let gateway = global.gatewayFlag == nil ? nil : try global.gatewayChoice().address
            // Read, change and write config.json holding its lock, so that two runs at once
            // cannot lose one's change.
            let settings = try await FileLock.withLock(paths.settingsLock, timeout: .seconds(30)) {
                try Self.choose(paths, gateway: gateway)
            }
            let saved = settings.gateway(of: profile)
            let output = Output(json: global.json)
            output.message(try ConfigJSON.encode(ProfileEntry(name: profile, settings: settings, base: paths.base, current: profile))) {
                "Now using profile \(profile), gateway \(saved ?? "\(GlobalOptions.defaultGateway) (none saved)")."
            }
            Self.noteOverrides(of: profile, gateway: saved ?? GlobalOptions.defaultGateway.description)
        }

        /// Says on standard error when `SHOPCTL_PROFILE` or `SHOP_GATEWAY` overrides the choice
        /// of `profile` and its `gateway` in this environment.
        static func noteOverrides(of profile: ProfileName, gateway: String) {
            let environment = ProcessContext.current.environment
            if let chosen = environment[ProfileName.environmentVariable], !chosen.isEmpty, chosen != profile.rawValue {
                Output.error("note: SHOPCTL_PROFILE=\(chosen) is set, and takes precedence in this environment.")
            }
            if let text = environment["SHOP_GATEWAY"], !text.isEmpty {
                let address = (try? GatewayAddress.parse(text))?.description
                if address != gateway {
                    Output.error(
                        "note: SHOP_GATEWAY=\(address ?? "(not an address)") is set, and takes precedence over the profile's gateway in this environment.")
                }
            }
        }

        /// Makes `paths`' profile the current one in `config.json` — and `gateway`, when given,
        /// its gateway — and returns the settings saved. A file that is not settings is
        /// replaced by new ones (this is how it is repaired), saying so on standard error.
        static func choose(_ paths: ConfigPaths, gateway: SocketAddressText?) throws(ShopctlError) -> ProfileSettings {
            var settings = try ProfileSettings.loadIfParsable(base: paths.base) ?? {
                Output.error(ProfileResolution.note(
                    ProfileSettings.notSettings(paths.settings), instead: "Replacing it with new settings."))
                return ProfileSettings()
            }()
            let profile = paths.profileName
            settings.currentProfile = profile.isDefault ? nil : profile.rawValue
            if let gateway { settings.gateways[profile.rawValue] = gateway.description }
            try settings.save(base: paths.base)
            return settings
        }
    }

    /// `shopctl config list`.
    struct List: AsyncParsableCommand {
        /// The command's name and help.
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the profiles, the one in use marked *, with their gateways and who is signed in.")

        /// `--profile` (marked as in use), `--json`.
        @OptionGroup var global: GlobalOptions

        /// Prints one line per profile (with `--json`, one JSON document per profile). With a
        /// `config.json` that cannot be read, the profiles are listed without their gateways.
        func run() async throws {
            let resolution = try global.resolved()
            let settings: ProfileSettings
            switch resolution.settings {
            case .success(let read):
                settings = read
            case .failure(let error):
                settings = ProfileSettings()
                Output.error(ProfileResolution.note(error, instead: "Listing the profiles without their gateways."))
            }
            let entries = ProfileEntry.all(settings: settings, base: resolution.base, current: try? resolution.profile.get())
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
            let paths = try global.paths
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

    /// The entry of `name`; `current` is the profile in use, nil when unknown.
    init(name: ProfileName, settings: ProfileSettings, base: URL, current: ProfileName?) {
        self.name = name.rawValue
        gateway = settings.gateway(of: name)
        self.current = name == current
        signedInAs = (try? CredentialsStore(paths: ConfigPaths(base: base, profile: name)).load())?.email
    }

    /// Every profile under `base`, sorted, `default` first: `default`, those with a saved
    /// gateway, those with a directory under `profiles/`, and `current` (the profile in use,
    /// nil when unknown).
    static func all(settings: ProfileSettings, base: URL, current: ProfileName?) -> [ProfileEntry] {
        let directories = (try? FileManager.default.contentsOfDirectory(atPath: base.appendingPathComponent("profiles").path)) ?? []
        let names = Set((Array(settings.gateways.keys) + directories).compactMap { try? ProfileName(validating: $0) })
            .union([.default] + (current.map { [$0] } ?? []))
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
