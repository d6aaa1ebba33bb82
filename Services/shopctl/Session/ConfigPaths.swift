import Foundation

/// Where shopctl keeps its files: `$XDG_CONFIG_HOME/shopctl`, or `~/.config/shopctl` when
/// `XDG_CONFIG_HOME` is unset, empty or relative (the XDG Base Directory spec ignores relative
/// paths) — and within it, the files of one profile.
///
/// The `default` profile keeps its files in the base directory itself (where shopctl kept
/// them before there were profiles, so nobody's session moves); a named profile keeps them in
/// `profiles/NAME/`. What belongs to no profile — which profile is current, each profile's
/// gateway (``ProfileSettings``), what `deploy/compose` started — stays in the base directory.
struct ConfigPaths: Sendable, Equatable {
    /// The `shopctl` directory (mode 0700 once shopctl creates it).
    let base: URL
    /// The profile whose files these are.
    let profileName: ProfileName
    /// The profile's directory: ``base`` for `default`, `profiles/NAME/` under it otherwise.
    var directory: URL {
        profileName.isDefault
            ? base : base.appendingPathComponent("profiles", isDirectory: true)
                .appendingPathComponent(profileName.rawValue, isDirectory: true)
    }

    /// The paths of `profile` under the base directory `environment` names (tests). Commands
    /// get theirs from ``ProfileResolution``, the one place that chooses the profile.
    init(environment: [String: String], profile: ProfileName = .default) {
        self.init(base: Self.base(environment: environment), profile: profile)
    }

    /// The paths of `profile` under an explicit base directory (tests).
    init(base: URL, profile: ProfileName = .default) {
        self.base = base
        profileName = profile
    }

    /// The `default` profile's paths under an explicit base directory (tests).
    init(directory: URL) {
        self.init(base: directory)
    }

    /// The base directory for `environment`.
    static func base(environment: [String: String]) -> URL {
        let root: String
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            root = xdg
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            root = (home as NSString).appendingPathComponent(".config")
        }
        return URL(fileURLWithPath: root, isDirectory: true).appendingPathComponent("shopctl", isDirectory: true)
    }

    /// The same base directory with `profile`'s files.
    func with(profile: ProfileName) -> ConfigPaths {
        ConfigPaths(base: base, profile: profile)
    }

    /// `credentials.json`: the access and refresh token (mode 0600).
    var credentials: URL { directory.appendingPathComponent("credentials.json") }
    /// `credentials.lock`: the `flock` that serializes refreshes across processes.
    var credentialsLock: URL { directory.appendingPathComponent("credentials.lock") }
    /// `profile.json`: the saved shipping address of `order place` (mode 0600). (The name
    /// predates named profiles; a named profile has its own.)
    var profile: URL { directory.appendingPathComponent("profile.json") }
    /// `config.json` in the base directory: the current profile and each profile's gateway.
    var settings: URL { base.appendingPathComponent("config.json") }
    /// `config.lock` in the base directory: the `flock` that serializes changes of ``settings``.
    var settingsLock: URL { base.appendingPathComponent("config.lock") }
    /// `compose.json`: what `deploy/compose up` last started — the gateway address, the mail
    /// directory, the admin key's file — written by compose, read by shopctl to say where
    /// things are (``ComposeRecord``). In the base directory: compose knows no profiles.
    var composeRecord: URL { base.appendingPathComponent("compose.json") }
}
