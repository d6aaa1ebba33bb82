import Foundation
import ServiceTestSupport
import Testing

/// The admin key never shows in `--help`: the commands that take `--api-key` name the
/// variable it falls back to instead of printing its value as the default (issue 27, point 2).
@Suite("admin key: help names SHOP_ADMIN_API_KEY and never prints it")
struct AdminKeyHelpTests {
    /// A key no help text could contain by chance.
    private static let key = "sekrit-admin-key-5f3a9c"

    @Test(
        "help of every command taking --api-key hides the key set in the environment",
        arguments: [
            ["admin", "products", "upsert"], ["admin", "products", "delete"], ["admin", "products", "import"],
            ["call"],
        ])
    func helpHidesKey(command: [String]) async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-help")
        defer { try? FileManager.default.removeItem(at: root) }
        let shopctl = ShopctlRunner(configHome: root.appendingPathComponent("config"), gateway: "127.0.0.1:1")
        let help = try await shopctl.run(command + ["--help"], environment: ["SHOP_ADMIN_API_KEY": Self.key])
        #expect(help.status == 0, "\(help)")
        #expect(!help.output.contains(Self.key) && !help.errors.contains(Self.key), "\(help)")
        // Help wraps to the terminal's width: compare with every run of white space as one space.
        let words = help.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("--api-key <key>"), "\(help)")
        #expect(words.contains("(env SHOP_ADMIN_API_KEY)"), "\(help)")
    }

    @Test("the admin group's and call's help show examples")
    func examples() async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-help")
        defer { try? FileManager.default.removeItem(at: root) }
        let shopctl = ShopctlRunner(configHome: root.appendingPathComponent("config"), gateway: "127.0.0.1:1")
        let admin = try await shopctl.succeed(["admin", "--help"])
        #expect(admin.output.contains("Examples:\n") && admin.output.contains("shopctl admin products import --dry-run"), "\(admin)")
        let call = try await shopctl.succeed(["call", "--help"])
        #expect(call.output.contains("Examples:\n") && call.output.contains("shopctl call CatalogService/GetProduct"), "\(call)")
        let importHelp = try await shopctl.succeed(["admin", "products", "import", "--help"])
        let words = importHelp.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("is CREATED ANEW ON EVERY RUN"), "\(importHelp)")
        #expect(words.contains(#"{"title": "Linen notebook", "category": "office", "price": {"amount": 1200, "currency": "USD"}}"#))
    }
}
