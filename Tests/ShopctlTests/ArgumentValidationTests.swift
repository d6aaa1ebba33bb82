import ArgumentParser
import Contracts
import Foundation
import Testing

@testable import shopctl

/// Bad input is refused before anything is sent, as a usage error (exit 2).
@Suite("Command-line validation")
struct ArgumentValidationTests {
    /// Parses `arguments` as shopctl would (after hoisting the global options).
    private func parse(_ arguments: [String]) throws -> any ParsableCommand {
        try Shopctl.parseAsRoot(GlobalOptions.hoisted(arguments))
    }

    private static let card = ["--card", "4242424242424242", "--exp", "12/30", "--cvc", "123"]
    private static let address = [
        "--name", "Ada", "--line1", "1 Main St", "--city", "Springfield", "--postal-code", "12345", "--country", "us",
    ]

    @Test(
        "refuses values that cannot be right",
        arguments: [
            ["order", "place"] + address + ["--card", "4242424242424242", "--exp", "13/30", "--cvc", "123"],
            ["order", "place"] + address + ["--card", "4242424242424242", "--exp", "1230", "--cvc", "123"],
            ["order", "place"] + address + ["--card", "4242-4242", "--exp", "12/30", "--cvc", "123"],
            ["order", "place"] + address + ["--card", "4242424242424242", "--exp", "12/30", "--cvc", "12a"],
            ["order", "place"] + address.dropLast(2) + ["--country", "USA"] + card,
            ["basket", "add", "3", "--count", "11"],
            ["basket", "add", "3", "--count", "0"],
            ["basket", "set", "abcd", "11"],
            ["products", "list", "--page-size", "0"],
            ["products", "list", "--sort", "CHEAPEST"],
            ["products", "show", "abc"],
            ["call", "NoSlashOrDot"],
            ["call", "shop.catalog.v1.CatalogService/GetProduct", "{}", "-H", "no-colon"],
            ["health", "--gateway", "not an address"],
            ["health", "--gateway", "http://127.0.0.1:8080/api"],
            ["health", "--gateway", "https://127.0.0.1:8443"],
            ["health", "--profile", "No/Such"],
            ["health", "--timeout", "0"],
            ["admin", "products", "upsert", "--title", "T", "--category", "c", "--price", "abc", "--api-key", "k"],
            ["admin", "products", "upsert", "--title", "T", "--api-key", "k"],
            ["admin", "products", "upsert", "--json-file", "f.json", "--title", "T", "--api-key", "k"],
            ["admin", "products", "delete", "1", "--api-key", ""],
            ["auth", "login"],
            ["auth", "login", "--email", "a@b.c", "--password", "secret"],
            ["auth", "verify", " \r\n"],
            ["auth", "verify", "http://127.0.0.1:8080/verify-email?next=1"],
            ["auth", "confirm-reset", "http://127.0.0.1:8080/reset-password?token="],
        ])
    func refuses(arguments: [String]) {
        #expect(throws: (any Error).self, "\(arguments)") { try parse(arguments) }
        do {
            _ = try parse(arguments)
        } catch {
            #expect(Shopctl.exitCode(for: error) == .validationFailure, "\(arguments): \(error)")
        }
    }

    @Test(
        "a negative number is read as the option's value and refused for its range, not as a missing value",
        arguments: [
            (["products", "list", "--page-size", "-1"], "--page-size must be 1 to 100"),
            (["basket", "add", "3", "--count", "-2"], "--count must be 1 to 10"),
            (["health", "--timeout", "-1"], "--timeout must be 0.1 to 3600 seconds"),
        ])
    func negativeNumbers(arguments: [String], message: String) {
        do {
            _ = try parse(arguments)
            Issue.record("\(arguments) was accepted")
        } catch {
            #expect(Shopctl.exitCode(for: error) == .validationFailure, "\(arguments): \(error)")
            #expect(Shopctl.message(for: error).contains(message), "\(arguments): \(Shopctl.message(for: error))")
        }
    }

    @Test(
        "a negative number where an argument goes is named as read for an option, not left as a missing argument",
        arguments: [["basket", "set", "abcd", "-1"], ["products", "show", "-5"], ["favorites", "add", "-2", "--json"]])
    func negativeArguments(arguments: [String]) {
        do {
            _ = try parse(arguments)
            Issue.record("\(arguments) was accepted")
        } catch {
            #expect(Shopctl.exitCode(for: error) == .validationFailure, "\(arguments): \(error)")
            let message = Shopctl.usageMessage(for: error, arguments: arguments)
            let number = arguments.first { $0.hasPrefix("-") && $0 != "--json" } ?? ""
            #expect(
                message.hasSuffix("; '\(number)' was read as an option: no argument of shopctl takes a negative number"),
                "\(arguments): \(message)")
            #expect(!message.contains("\n") && !message.hasPrefix("Error:"), "\(arguments): \(message)")
        }
        // Other usage errors are left as ArgumentParser words them, on one line.
        do {
            _ = try parse(["basket", "set", "abcd"])
        } catch {
            #expect(Shopctl.usageMessage(for: error, arguments: ["basket", "set", "abcd"]) == "Missing expected argument '<count>'")
        }
    }

    @Test("accepts a complete order, lower-case country and a four-digit year included")
    func acceptsOrder() throws {
        let command = try #require(try parse(["order", "place"] + Self.address + Self.card) as? OrderCommand.Place)
        let request = try command.request()
        #expect(request.shippingAddress.country == "US")
        #expect(request.payment == CardDetails(cardNumber: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123"))
        let long = try #require(
            try parse(["order", "place"] + Self.address + ["--card", "4242 4242 4242 4242", "--exp", "1/2031", "--cvc", "0123"])
                as? OrderCommand.Place)
        #expect(try long.request().payment == CardDetails(cardNumber: "4242424242424242", expMonth: 1, expYear: 2031, cvc: "0123"))
    }

    @Test("an email's token is taken as pasted: trimmed of the email's CR LF and spaces, or out of its link")
    func emailTokens() throws {
        let token = "a4i8XJFjLLmtoaGRtxsHrOctsGLMl_cix7TFh_TuxS4"
        for pasted in [token, token + "\r", " \(token)\r\n", "http://127.0.0.1:8080/verify-email?token=\(token)",
                       "https://shop.example/verify-email?token=\(token)&utm=mail\r\n"] {
            let verify = try #require(try parse(["auth", "verify", pasted]) as? AuthCommand.Verify)
            #expect(verify.token == token, "\(pasted.debugDescription)")
            let reset = try #require(try parse(["auth", "confirm-reset", pasted]) as? AuthCommand.ConfirmReset)
            #expect(reset.token == token, "\(pasted.debugDescription)")
        }
    }

    @Test("global options may come before the subcommand, after it, or with =")
    func hoisting() throws {
        #expect(
            GlobalOptions.hoisted(["--json", "products", "list", "--gateway", "h:1", "--page-size", "3"])
                == ["products", "list", "--page-size", "3", "--json", "--gateway", "h:1"])
        #expect(GlobalOptions.hoisted(["--timeout=2", "health"]) == ["health", "--timeout=2"])
        // After `--` nothing is touched.
        #expect(GlobalOptions.hoisted(["call", "a/b", "--", "--json"]) == ["call", "a/b", "--", "--json"])
        let command = try #require(try parse(["--json", "--gateway", "10.0.0.1:9", "products", "list"]) as? ProductsCommand.List)
        #expect(command.global.json)
        #expect(command.global.gateway == "10.0.0.1:9")
    }

    @Test(
        "the gateway is --gateway, else a non-empty SHOP_GATEWAY, else 127.0.0.1:8080",
        arguments: [
            (["XDG_CONFIG_HOME": "/nonexistent"], [], "127.0.0.1:8080"),
            (["XDG_CONFIG_HOME": "/nonexistent", "SHOP_GATEWAY": ""], [], "127.0.0.1:8080"),
            (["SHOP_GATEWAY": "10.0.0.2:7"], [], "10.0.0.2:7"),
            (["SHOP_GATEWAY": "10.0.0.2:7"], ["--gateway", "10.0.0.3:9"], "10.0.0.3:9"),
        ] as [([String: String], [String], String)])
    func gatewayAddress(environment: [String: String], flags: [String], expected: String) throws {
        // The defaults are read from the task's process context, not this test process's
        // environment (which may well set SHOP_GATEWAY).
        let context = ProcessContext(environment: environment, readStandardInput: { Data() }, writeStandardOutput: { _ in })
        let gateway = try ProcessContext.$current.withValue(context) { (try parse(["health"] + flags) as? HealthCommand)?.global.gateway }
        #expect(gateway == expected, "\(environment) \(flags)")
    }

    @Test("sort names are the wire names in any case")
    func sortNames() throws {
        let command = try #require(try parse(["products", "list", "--sort", "price-desc"]) as? ProductsCommand.List)
        #expect(command.sort?.sort == .priceDescending)
    }
}
