/// The name of a profile: one backend's credentials, shipping address and gateway address,
/// as `firebase use` keeps one project's. Lower-case letters, digits, `-` and `_`, at most 40
/// characters, the first a letter or digit — a directory name on every system, never a path,
/// never read as an option.
struct ProfileName: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The name as typed.
    let rawValue: String

    /// The profile used when none is chosen; its files are where shopctl kept them before
    /// there were profiles.
    static let `default` = ProfileName(known: "default")

    /// The environment variable that chooses a profile (below `--profile`).
    static let environmentVariable = "SHOPCTL_PROFILE"

    /// The longest name.
    static let maxLength = 40

    /// The name `text`.
    /// - Throws: a usage error saying what a name may be.
    init(validating text: String) throws(ShopctlError) {
        let allowed = text.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_"
        }
        let leading = text.unicodeScalars.first.map { ("a"..."z").contains($0) || ("0"..."9").contains($0) } ?? false
        guard leading, text.count <= Self.maxLength, allowed else {
            throw .usage(
                "A profile name is 1 to \(Self.maxLength) of a-z, 0-9, '-' and '_', starting with a letter or digit (got '\(text)').",
                hint: "see the profiles with `shopctl config list`")
        }
        rawValue = text
    }

    private init(known text: String) {
        rawValue = text
    }

    /// Whether this is the `default` profile.
    var isDefault: Bool { self == .default }

    var description: String { rawValue }

    static func < (left: ProfileName, right: ProfileName) -> Bool { left.rawValue < right.rawValue }
}
