import Contracts
import Credentials
import Foundation
import RPC
import ServiceTestSupport
import Testing

@testable import shopctl

/// What the live tests share: the password, the address and card flags, fresh email addresses.
/// (Running shopctl, signing up, decoding `--json` output and forging expired tokens are in
/// ServiceTestSupport, shared with the end-to-end suite.)
enum LiveFixtures {
    /// The password every account gets (long, uncommon, not an email).
    static let password = "amber-orchard-violin-58"

    /// The address flags of `order place`.
    static let addressFlags = [
        "--name", "Ada Lovelace", "--line1", "12 Analytical Row", "--city", "London", "--postal-code", "N1 9GU",
        "--country", "GB",
    ]

    /// The card flags for `number`, expiring 12/30.
    static func cardFlags(_ number: String) -> [String] { ["--card", number, "--exp", "12/30", "--cvc", "123"] }

    /// A fresh email address.
    static func newEmail() -> String { "shopper-\(UUID().uuidString.prefix(8).lowercased())@example.com" }
}

extension ShopctlRunner {
    /// Where shopctl keeps its files for these runs.
    var paths: ConfigPaths { ConfigPaths(environment: ["XDG_CONFIG_HOME": configHome.path]) }
}
