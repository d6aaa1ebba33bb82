import ArgumentParser
import Foundation
import ServiceTestSupport
import Testing

@testable import shopctl

/// A mistyped or misplaced command gets the command it most likely meant.
@Suite("Near misses: did you mean `shopctl products`? `shopctl auth login`?")
struct NearMissTests {
    /// The usage report shopctl prints for `arguments`, which must not parse.
    private func report(_ arguments: [String]) throws -> ErrorReport {
        do {
            _ = try Shopctl.parseAsRoot(GlobalOptions.hoisted(arguments))
        } catch {
            #expect(Shopctl.exitCode(for: error) == .validationFailure, "\(arguments): \(error)")
            return UsageReport.report(for: error, arguments: arguments)
        }
        throw ShopctlError.local("\(arguments) parsed")
    }

    @Test(
        "suggests the closest command, or the group that has a command of that name",
        arguments: [
            (["prodcts", "list"], "Unknown command 'prodcts' for `shopctl`; did you mean `shopctl products`?"),
            (["login"], "Unknown command 'login' for `shopctl`; did you mean `shopctl auth login`?"),
            (["--json", "baskt", "show"], "Unknown command 'baskt' for `shopctl`; did you mean `shopctl basket`?"),
            (["basket", "ad", "3"], "Unknown command 'ad' for `shopctl basket`; did you mean `shopctl basket add`?"),
            (["auth", "whoamii"], "Unknown command 'whoamii' for `shopctl auth`; did you mean `shopctl auth whoami`?"),
            (["lgoin"], "Unknown command 'lgoin' for `shopctl`; did you mean `shopctl auth login`?"),
            (["zzzzzz"], "Unknown command 'zzzzzz' for `shopctl`"),
        ])
    func suggestions(arguments: [String], message: String) throws {
        let report = try report(arguments)
        #expect(report.message == message)
        #expect(report.reason == "USAGE" && report.code == "INVALID_ARGUMENT" && report.status == .usage)
        #expect(report.line == "error: \(message) (see `\(CommandWalk(GlobalOptions.hoisted(arguments)).path) --help`)")
    }

    @Test("a word several groups have as a command names them")
    func several() throws {
        let message = try report(["list"]).message
        #expect(message.hasPrefix("Unknown command 'list' for `shopctl`; did you mean one of `shopctl products list`, "), "\(message)")
    }

    @Test("other usage errors are ArgumentParser's message on one line, pointing at the command's help")
    func otherUsageErrors() throws {
        let unknownOption = try report(["products", "list", "--colour", "red"])
        #expect(unknownOption.line.hasPrefix("error: Unknown option '--colour'"), "\(unknownOption.line)")
        #expect(unknownOption.line.hasSuffix("(see `shopctl products list --help`)"), "\(unknownOption.line)")
        #expect(!unknownOption.line.contains("\n"))
    }

    @Test("the real shopctl: `shopctl prodcts list` and `shopctl login` say what was meant, on one line, exit 2")
    func live() async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-near-miss")
        defer { try? FileManager.default.removeItem(at: root) }
        let shopctl = ShopctlRunner(configHome: root, gateway: "127.0.0.1:1")
        for (arguments, meant) in [(["prodcts", "list"], "`shopctl products`"), (["login"], "`shopctl auth login`")] {
            let result = try await shopctl.run(arguments)
            #expect(result.status == 2, "\(result)")
            #expect(result.errors.split(separator: "\n").count == 1 && result.errors.contains("did you mean \(meant)?"), "\(result)")
            #expect(result.output.isEmpty, "\(result)")
        }
    }
}
