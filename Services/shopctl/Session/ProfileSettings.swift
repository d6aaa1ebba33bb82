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
        let file = ConfigPaths(base: base).settings
        guard let data = try PrivateFile.read(file) else { return ProfileSettings() }
        do {
            return try JSONDecoder().decode(ProfileSettings.self, from: data)
        } catch {
            throw .local(
                "\(file.path) is not shopctl's settings file.",
                hint: "fix or delete it; `shopctl config use NAME` writes a new one")
        }
    }

    /// The settings in `base`, or nil when they cannot be read: for choosing the current
    /// profile where a failure cannot be reported (``ConfigPaths/init(environment:profile:)``);
    /// ``GlobalOptions/validate()`` reports it first.
    static func loadIfReadable(base: URL) -> ProfileSettings? {
        try? load(base: base)
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
