import Foundation

/// The profile and the gateway a command uses, chosen once (by ``GlobalOptions/validate()``)
/// from `--profile` and `--gateway`, the environment and `config.json`: the one place that
/// applies their precedence.
///
/// The profile is `--profile`, else `SHOPCTL_PROFILE`, else the one `shopctl config use`
/// saved, else `default`; the gateway is `--gateway`, else `SHOP_GATEWAY`, else the profile's
/// saved one, else 127.0.0.1:8080. A malformed flag or variable is refused at once (a usage
/// error). `config.json` is needed only for what neither gives, so a file that cannot be read
/// fails only the choices that depend on it — and only when a command asks for them (a local
/// error, exit 1): `config use` can still rewrite it, `auth logout` still drop a session.
struct ProfileResolution: Sendable {
    /// The `shopctl` directory.
    let base: URL
    /// The settings in `config.json` (empty when there is no file), or why they cannot be read.
    let settings: Result<ProfileSettings, ShopctlError>
    /// The profile in use, or why it cannot be known (it had to come from an unreadable file).
    let profile: Result<ProfileName, ShopctlError>
    /// The gateway to call, or why it cannot be known.
    let gateway: Result<GatewayChoice, ShopctlError>

    /// The choice for the flags `profileFlag` and `gatewayFlag` (nil when not given) in
    /// `environment`.
    /// - Throws: a usage error when a flag, `SHOPCTL_PROFILE` or `SHOP_GATEWAY` is malformed.
    init(profileFlag: String?, gatewayFlag: String?, environment: [String: String]) throws(ShopctlError) {
        let base = ConfigPaths.base(environment: environment)
        let settings = Result { () throws(ShopctlError) in try ProfileSettings.load(base: base) }
        let profile: Result<ProfileName, ShopctlError>
        if let given = profileFlag ?? Self.nonEmpty(environment[ProfileName.environmentVariable]) {
            profile = .success(try ProfileName(validating: given))
        } else {
            profile = settings.flatMap { settings in
                Result { () throws(ShopctlError) in try Self.savedProfile(settings, file: ConfigPaths(base: base).settings) }
            }
        }
        if let gatewayFlag {
            gateway = .success(GatewayChoice(address: try GatewayAddress.parse(gatewayFlag), source: .flag))
        } else if let text = Self.nonEmpty(environment["SHOP_GATEWAY"]) {
            gateway = .success(GatewayChoice(address: try GatewayAddress.parse(text), source: .environment))
        } else {
            gateway = profile.flatMap { profile in
                settings.flatMap { settings in
                    Result { () throws(ShopctlError) in
                        try Self.savedGateway(settings, of: ConfigPaths(base: base, profile: profile))
                    }
                }
            }
        }
        self.base = base
        self.settings = settings
        self.profile = profile
    }

    /// The files of the profile in use, or why it cannot be known.
    var paths: Result<ConfigPaths, ShopctlError> {
        profile.map { ConfigPaths(base: base, profile: $0) }
    }

    /// The profile `config use` saved, `default` when none.
    private static func savedProfile(_ settings: ProfileSettings, file: URL) throws(ShopctlError) -> ProfileName {
        guard let saved = settings.currentProfile else { return .default }
        do {
            return try ProfileName(validating: saved)
        } catch {
            throw .local(
                "\(file.path) names '\(saved)' as the profile in use, which is not a profile name.",
                hint: "choose one with `shopctl config use NAME`")
        }
    }

    /// The gateway saved for the profile of `paths`, else the built-in one.
    private static func savedGateway(_ settings: ProfileSettings, of paths: ConfigPaths) throws(ShopctlError) -> GatewayChoice {
        guard let saved = settings.gateway(of: paths.profileName) else {
            return GatewayChoice(address: GlobalOptions.defaultGateway, source: .builtIn)
        }
        do {
            return GatewayChoice(address: try GatewayAddress.parse(saved), source: .profile(paths.profileName))
        } catch {
            throw .usage(
                "The gateway saved for profile \(paths.profileName) in \(paths.settings.path) is not an address: \(error.message)",
                hint: "set it again with `shopctl config use \(paths.profileName) --gateway ADDRESS`")
        }
    }

    /// A note for standard error: `error` (an unreadable `config.json`), what the command does
    /// without the file (`instead`, a sentence), and the error's hint.
    static func note(_ error: ShopctlError, instead: String) -> String {
        "note: \(error.message) \(instead)" + (error.hint.map { " (\($0))" } ?? "")
    }

    /// `text` unless it is empty: an empty variable counts as unset.
    private static func nonEmpty(_ text: String?) -> String? {
        text.flatMap { $0.isEmpty ? nil : $0 }
    }
}
