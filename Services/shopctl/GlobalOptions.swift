import ArgumentParser
import Foundation
import RPCHTTP2

/// The flags every command takes: where the gateway is, `--json`, and the deadline of each call.
struct GlobalOptions: ParsableArguments {
    /// The gateway's address.
    @Option(help: "Gateway address host:port (env SHOP_GATEWAY).")
    var gateway = ProcessContext.current.environment["SHOP_GATEWAY"].flatMap { $0.isEmpty ? nil : $0 }
        ?? "127.0.0.1:8080"

    /// Whether to print raw response messages instead of text for people.
    @Flag(help: "Print the raw response messages as JSON, one document per line (for scripts).")
    var json = false

    /// The deadline of each call, in seconds.
    /// (`.unconditional`, like every number: `-1` is read as a value, and refused as out of
    /// range, not as an unknown option that leaves the value missing.)
    @Option(parsing: .unconditional, help: "Deadline of each call in seconds; watch commands have none.")
    var timeout: Double = 10

    /// Refuses an address that is not host:port and a deadline outside 0.1 s ... 1 h.
    func validate() throws {
        guard SocketAddressText(gateway) != nil else {
            throw ValidationError("--gateway must be host:port, e.g. 127.0.0.1:8080 (got '\(gateway)').")
        }
        guard timeout >= 0.1, timeout <= 3600 else { throw ValidationError("--timeout must be 0.1 to 3600 seconds.") }
    }

    /// `arguments` with the global options moved to the end (before a `--`), so that they may
    /// come anywhere — `shopctl --json products list` — while only the commands that run
    /// declare them: ArgumentParser takes a subcommand's options only after its name.
    static func hoisted(_ arguments: [String]) -> [String] {
        let flags: Set<String> = ["--json"]
        let options: Set<String> = ["--gateway", "--timeout"]
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        var kept: [String] = []
        var moved: [String] = []
        var index = arguments.startIndex
        while index < end {
            let argument = arguments[index]
            let name = String(argument.prefix { $0 != "=" })
            if flags.contains(argument) || (options.contains(name) && argument.contains("=")) {
                moved.append(argument)
            } else if options.contains(argument), index + 1 < end {
                moved += [argument, arguments[index + 1]]
                index += 1
            } else {
                kept.append(argument)
            }
            index += 1
        }
        return kept + moved + arguments[end...]
    }

    /// Runs `body` with a client of the gateway, closing the client afterwards.
    func withContext<Result>(_ body: (CommandContext) async throws -> Result) async throws -> Result {
        guard let address = SocketAddressText(gateway) else { throw ShopctlError.usage("--gateway must be host:port.") }
        let client = try RPCClient(target: address)
        let paths = ConfigPaths()
        let context = CommandContext(
            gateway: GatewayClient(
                transport: GatewayTransport(client: client), store: CredentialsStore(paths: paths),
                timeout: .milliseconds(Int(timeout * 1000))),
            output: Output(json: json), paths: paths)
        do {
            let result = try await body(context)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }
}

/// What a running command works with: the gateway, the output, and shopctl's files.
struct CommandContext: Sendable {
    /// Calls to the gateway.
    let gateway: GatewayClient
    /// Standard output, human or JSON.
    let output: Output
    /// Where the credentials and profile live.
    let paths: ConfigPaths

    /// The credentials file.
    var store: CredentialsStore { gateway.store }
}
