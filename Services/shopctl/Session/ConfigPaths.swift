import Foundation

/// Where shopctl keeps its files: `$XDG_CONFIG_HOME/shopctl`, or `~/.config/shopctl` when
/// `XDG_CONFIG_HOME` is unset, empty or relative (the XDG Base Directory spec ignores relative
/// paths).
struct ConfigPaths: Sendable, Equatable {
    /// The `shopctl` directory (mode 0700 once shopctl creates it).
    let directory: URL

    /// The paths for `environment` (the running command's, ``ProcessContext/current``, by default).
    init(environment: [String: String] = ProcessContext.current.environment) {
        let base: String
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            base = xdg
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            base = (home as NSString).appendingPathComponent(".config")
        }
        directory = URL(fileURLWithPath: base, isDirectory: true).appendingPathComponent("shopctl", isDirectory: true)
    }

    /// Paths under an explicit directory (tests).
    init(directory: URL) {
        self.directory = directory
    }

    /// `credentials.json`: the access and refresh token (mode 0600).
    var credentials: URL { directory.appendingPathComponent("credentials.json") }
    /// `credentials.lock`: the `flock` that serializes refreshes across processes.
    var credentialsLock: URL { directory.appendingPathComponent("credentials.lock") }
    /// `profile.json`: the saved shipping address of `order place` (mode 0600).
    var profile: URL { directory.appendingPathComponent("profile.json") }
    /// `compose.json`: what `deploy/compose up` last started — the gateway address, the mail
    /// directory, the admin key's file — written by compose, read by shopctl to say where
    /// things are (``ComposeRecord``).
    var composeRecord: URL { directory.appendingPathComponent("compose.json") }
}
