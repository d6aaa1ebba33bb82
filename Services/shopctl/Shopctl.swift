import ArgumentParser
import Foundation
import RPC

/// `shopctl`, the Storefront command line: accounts, the catalog, favorites, the basket,
/// orders, catalog administration, and any method by name — against the gateway.
@main
struct Shopctl: AsyncParsableCommand {
    /// The command tree.
    static let configuration = CommandConfiguration(
        commandName: "shopctl",
        abstract: "The Storefront command line: shop, manage the catalog and call any method through the gateway.",
        discussion: """
            --gateway, --json and --timeout may come before or after the subcommand.
            Credentials live in $XDG_CONFIG_HOME/shopctl/credentials.json (~/.config/shopctl by default).
            Exit codes: 0 ok, 1 other failure, 2 usage, 3 not signed in or session ended,
            4 request refused, 5 unavailable or timed out, 6 permission denied, 7 rate limited.
            """,
        subcommands: [
            AuthCommand.self, ProductsCommand.self, CategoriesCommand.self, FavoritesCommand.self, BasketCommand.self,
            OrderCommand.self, AdminCommand.self, CallCommand.self, DescribeCommand.self, HealthCommand.self,
        ])

    /// Parses the command line and runs the command; every failure ends the process with one
    /// line on standard error and the exit status of its class (README, "Exit codes").
    static func main() async {
        do {
            var command = try parseAsRoot(GlobalOptions.hoisted(Array(CommandLine.arguments.dropFirst())))
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            fail(with: error)
        }
        Foundation.exit(ExitStatus.success.rawValue)
    }

    /// Ends the process for `error`: ours and the server's as one line and their class's
    /// status; ArgumentParser's as it prints them (help and version exit 0, usage errors 2).
    static func fail(with error: any Error) -> Never {
        switch error {
        case is RPCError, is ShopctlError:
            break
        case let exit as ExitCode:
            Foundation.exit(exit.rawValue)
        default:
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }  // --help, --version
            if code == .validationFailure {
                Output.error(usageMessage(for: error, arguments: Array(CommandLine.arguments.dropFirst())))
                Foundation.exit(ExitStatus.usage.rawValue)
            }
        }
        let report = ErrorReport(other: error)
        Output.error(report.line)
        Foundation.exit(report.status.rawValue)
    }

    /// ArgumentParser's message for a usage error, with a hint under its first line when a
    /// negative number was taken for an option: `basket set ITEM -1` reads `-1` as a flag and
    /// says the count is missing. No argument of shopctl takes a negative number (an option's
    /// value does get read as one: `--page-size -1` is refused for its range).
    static func usageMessage(for error: any Error, arguments: [String]) -> String {
        let message = fullMessage(for: error)
        let isNegativeNumber = { (argument: String) in
            argument.count > 1 && argument.first == "-" && argument.dropFirst().allSatisfy { ("0"..."9").contains($0) || $0 == "." }
        }
        guard message.contains("Missing expected argument"), let number = arguments.first(where: isNegativeNumber) else {
            return message
        }
        var lines = message.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.insert("'\(number)' was read as an option: no argument of shopctl takes a negative number.", at: 1)
        return lines.joined(separator: "\n")
    }
}
