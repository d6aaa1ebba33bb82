import Foundation
import ServiceTestSupport
import Testing

@testable import shopctl

/// `shopctl --version`, and the shell completion scripts the README tells people to install.
@Suite("--version and the completion scripts")
struct VersionTests {
    /// Runs `body` with a runner of a scratch config home (no gateway is called).
    private func withRunner(_ body: (ShopctlRunner) async throws -> Void) async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-version")
        defer { try? FileManager.default.removeItem(at: root) }
        try await body(ShopctlRunner(configHome: root, gateway: "127.0.0.1:1"))
    }

    @Test("--version prints the version alone and exits 0")
    func version() async throws {
        #expect(Shopctl.version.split(separator: ".").count == 3 && Shopctl.version.allSatisfy { $0.isNumber || $0 == "." })
        try await withRunner { shopctl in
            let result = try await shopctl.succeed(["--version"])
            #expect(result.output == "\(Shopctl.version)\n", "\(result)")
            #expect(result.errors.isEmpty, "\(result)")
        }
    }

    @Test("the top-level help shows examples and the profile option", arguments: [["--help"], ["help"]])
    func helpExamples(arguments: [String]) async throws {
        try await withRunner { shopctl in
            let result = try await shopctl.succeed(arguments)
            #expect(result.output.contains("Examples:\n  shopctl auth signup"), "\(result)")
            #expect(result.output.contains("config"), "\(result)")
        }
    }

    @Test("a completion script generates for bash, zsh and fish, and completes the commands", arguments: ["bash", "zsh", "fish"])
    func completion(shell: String) async throws {
        try await withRunner { shopctl in
            let result = try await shopctl.succeed(["--generate-completion-script", shell])
            #expect(result.output.contains("shopctl"), "\(result)")
            for command in ["products", "basket", "config"] { #expect(result.output.contains(command), "\(shell): \(command)") }
        }
    }
}
