import Foundation

/// `config.json` in shopctl's base directory: which profile is current (`shopctl config use`)
/// and the gateway address each profile was given. Never holds a secret; written atomically,
/// mode 0600, like every shopctl file.
struct ProfileSettings: Codable, Sendable, Equatable {
    /// The profile used when neither `--profile` nor `SHOPCTL_PROFILE` says; nil for `default`.
    var currentProfile: String?
    /// Each profile's gateway address (`host:port`), by profile name.
    var gateways: [String: String]

    /// Settings that choose nothing.
    init(currentProfile: String? = nil, gateways: [String: String] = [:]) {
        self.currentProfile = currentProfile
        self.gateways = gateways
    }

    /// The settings in `base`; empty ones when there is no file.
    /// - Throws: a local error naming the file when it cannot be read or is not settings.
    static func load(base: URL) throws(ShopctlError) -> ProfileSettings {
        guard let settings = try loadIfParsable(base: base) else { throw notSettings(ConfigPaths(base: base).settings) }
        return settings
    }

    /// The settings in `base` (empty ones when there is no file), or nil when the file is not
    /// settings — for `config use`, which replaces such a file.
    /// - Throws: a local error naming the file when it cannot be read at all.
    static func loadIfParsable(base: URL) throws(ShopctlError) -> ProfileSettings? {
        guard let data = try PrivateFile.read(ConfigPaths(base: base).settings) else { return ProfileSettings() }
        return try? JSONDecoder().decode(ProfileSettings.self, from: data)
    }

    /// The failure of a `file` that is not shopctl's settings.
    static func notSettings(_ file: URL) -> ShopctlError {
        .local(
            "\(file.path) is not shopctl's settings file.",
            hint: "fix or delete it; `shopctl config use NAME` writes a new one")
    }

    /// Writes the settings to `base`.
    func save(base: URL) throws(ShopctlError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(self)
        } catch {
            throw .local("Cannot encode the settings: \(error)")
        }
        try PrivateFile.write(data + Data("\n".utf8), to: ConfigPaths(base: base).settings)
    }

    /// The gateway saved for `profile`, if any.
    func gateway(of profile: ProfileName) -> String? {
        gateways[profile.rawValue]
    }
}
