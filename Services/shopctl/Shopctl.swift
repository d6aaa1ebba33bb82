import ArgumentParser
import Foundation
import RPC

/// `shopctl`, the Storefront command line: accounts, the catalog, favorites, the basket,
/// orders, catalog administration, and any method by name — against the gateway.
@main
struct Shopctl: AsyncParsableCommand {
    /// shopctl's version, as `--version` prints it. Raised with every change of its commands,
    /// flags or output that a script could notice.
    static let version = "0.10.0"

    /// The command tree.
    static let configuration = CommandConfiguration(
        commandName: "shopctl",
        abstract: "The Storefront command line: shop, manage the catalog and call any method through the gateway.",
        discussion: """
            Examples:
              shopctl auth signup --email ada@example.com     # prompts for a password
              shopctl auth login --email ada@example.com
              shopctl products list --search backpack --sort PRICE_ASC
              shopctl basket add 3 --count 2
              shopctl order place --name "Ada Lovelace" --line1 "12 Analytical Row" \\
                  --city London --postal-code "N1 9GU" --country GB --exp 12/30 --cvc 123
              shopctl --json order list | jq '.orders[0].status'
              shopctl config use staging --gateway shop.example.net:8080

            `order place` asks for the card number at a prompt that does not show it.
            --gateway, --profile, --json and --timeout may come before or after the subcommand.
            Profiles keep a session and a gateway address per backend (`shopctl config`);
            the default profile's files are in $XDG_CONFIG_HOME/shopctl (~/.config/shopctl).
            Errors are one line on standard error (with --json, one JSON object).
            Exit codes: 0 ok, 1 other failure, 2 usage, 3 not signed in or session ended,
            4 request refused, 5 unavailable or timed out, 6 permission denied, 7 rate limited.
            """,
        version: version,
        subcommands: [
            AuthCommand.self, ProductsCommand.self, CategoriesCommand.self, FavoritesCommand.self, BasketCommand.self,
            OrderCommand.self, AdminCommand.self, CallCommand.self, DescribeCommand.self, HealthCommand.self,
            TopCommand.self, ConfigCommand.self,
        ])

    /// Parses the command line and runs the command; every failure ends the process with one
    /// line on standard error (one JSON object with `--json`) and the exit status of its class
    /// (README, "Exit codes").
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            var command = try parseAsRoot(GlobalOptions.hoisted(arguments))
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            fail(with: error, arguments: arguments)
        }
        Foundation.exit(ExitStatus.success.rawValue)
    }

    /// Ends the process for `error`, met running `arguments`: help and version as
    /// ArgumentParser prints them (exit 0), everything else reported in one line or one JSON
    /// object, exiting with its class's status.
    static func fail(with error: any Error, arguments: [String]) -> Never {
        if let exit = error as? ExitCode { Foundation.exit(exit.rawValue) }
        let report = report(for: error, arguments: arguments)
        Output.report(report, json: GlobalOptions.asksForJSON(arguments))
        Foundation.exit(report.status.rawValue)
    }

    /// The report of `error`, met running `arguments`; ends the process at once for `--help`
    /// and `--version`, which are not failures.
    static func report(for error: any Error, arguments: [String]) -> ErrorReport {
        switch error {
        case is RPCError, is ShopctlError:
            return ErrorReport(other: error)
        default:
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }  // --help, --version
            if code == .validationFailure { return UsageReport.report(for: error, arguments: arguments) }
            return ErrorReport(other: error)
        }
    }

    /// ArgumentParser's message for a usage error on one line, saying so when a negative
    /// number was taken for an option: `basket set ITEM -1` reads `-1` as a flag and says the
    /// count is missing. No argument of shopctl takes a negative number (an option's value
    /// does get read as one: `--page-size -1` is refused for its range).
    static func usageMessage(for error: any Error, arguments: [String]) -> String {
        let first = message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
        let message = first.hasPrefix("Error: ") ? String(first.dropFirst("Error: ".count)) : first
        let isNegativeNumber = { (argument: String) in
            argument.count > 1 && argument.first == "-" && argument.dropFirst().allSatisfy { ("0"..."9").contains($0) || $0 == "." }
        }
        guard message.contains("Missing expected argument"), let number = arguments.first(where: isNegativeNumber) else {
            return message
        }
        return "\(message); '\(number)' was read as an option: no argument of shopctl takes a negative number"
    }
}
