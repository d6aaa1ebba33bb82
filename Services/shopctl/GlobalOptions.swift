import ArgumentParser
import Foundation
import RPC
import RPCHTTP2

/// The flags every command takes: the profile, where the gateway is, `--json`, and the
/// deadline of each call.
struct GlobalOptions: ParsableArguments {
    /// The gateway's address as given with `--gateway`; nil when not given (see ``gatewayChoice()``).
    @Option(
        name: .customLong("gateway"),
        help: ArgumentHelp(
            "Gateway address: host:port, http://host:port or a host (port 8080).",
            discussion: "Default: env SHOP_GATEWAY, else the profile's gateway (`shopctl config use`), else 127.0.0.1:8080.",
            valueName: "address"))
    var gatewayFlag: String?

    /// The profile as given with `--profile`; nil when not given (see ``ProfileResolution``).
    @Option(
        help: ArgumentHelp(
            "Profile whose session and gateway to use (env SHOPCTL_PROFILE).",
            discussion: "Default: the profile `shopctl config use` chose, else `default`.", valueName: "name"))
    var profile: String?

    /// Whether to print raw response messages instead of text for people.
    @Flag(help: "Print the raw response messages as JSON, one document per line (for scripts).")
    var json = false

    /// The deadline of each call, in seconds.
    /// (`.unconditional`, like every number: `-1` is read as a value, and refused as out of
    /// range, not as an unknown option that leaves the value missing.)
    @Option(parsing: .unconditional, help: "Deadline of each call in seconds; watch commands have none.")
    var timeout: Double = 10

    /// The profile and gateway chosen by ``validate()``; nil before it ran.
    private var resolution: ProfileResolution?

    /// The options ArgumentParser fills in (``resolution`` is derived from them).
    private enum CodingKeys: String, CodingKey {
        case gatewayFlag, profile, json, timeout
    }

    /// The gateway's address (`host:port`) the command calls, once ``validate()`` has accepted
    /// the options; for messages.
    var gateway: String { ((try? gatewayChoice().address) ?? Self.defaultGateway).description }

    /// The address used when nothing else gives one.
    static let defaultGateway = SocketAddressText(host: "127.0.0.1", port: GatewayAddress.defaultPort)

    /// Refuses a malformed profile name or gateway address (from a flag or the environment) and
    /// a deadline outside 0.1 s ... 1 h, and chooses the profile and gateway once. What depends
    /// on an unreadable `config.json` fails later, and only for the commands that need it.
    mutating func validate() throws {
        do throws(ShopctlError) {
            resolution = try resolve()
        } catch {
            throw ValidationError(Self.sentence(error))
        }
        guard timeout >= 0.1, timeout <= 3600 else { throw ValidationError("--timeout must be 0.1 to 3600 seconds.") }
    }

    /// A usage error as one sentence: its message, then its hint after a semicolon.
    private static func sentence(_ error: ShopctlError) -> String {
        guard let hint = error.hint else { return error.message }
        let message = error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message
        return "\(message); \(hint)"
    }

    // MARK: Profile and gateway

    /// The choice of profile and gateway: the one ``validate()`` made (made now when it did not run).
    func resolved() throws(ShopctlError) -> ProfileResolution {
        if let resolution { return resolution }
        return try resolve()
    }

    /// Chooses the profile and gateway from the options and the running command's environment.
    private func resolve() throws(ShopctlError) -> ProfileResolution {
        try ProfileResolution(profileFlag: profile, gatewayFlag: gatewayFlag, environment: ProcessContext.current.environment)
    }

    /// The files of the profile in use: `--profile`, else `SHOPCTL_PROFILE`, else the one
    /// `shopctl config use` saved, else `default`.
    /// - Throws: a local error when the profile had to come from a `config.json` that cannot be read.
    var paths: ConfigPaths {
        get throws(ShopctlError) { try resolved().paths.get() }
    }

    /// The gateway to call and where its address came from: `--gateway`, else `SHOP_GATEWAY`,
    /// else the profile's saved gateway, else 127.0.0.1:8080.
    /// - Throws: an error when it had to come from a `config.json` that cannot be read or
    ///   holds no address.
    func gatewayChoice() throws(ShopctlError) -> GatewayChoice {
        try resolved().gateway.get()
    }

    // MARK: Argument order

    /// `arguments` with the global options moved to the end (before a `--`), so that they may
    /// come anywhere — `shopctl --json products list` — while only the commands that run
    /// declare them: ArgumentParser takes a subcommand's options only after its name.
    static func hoisted(_ arguments: [String]) -> [String] {
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

    /// The global flags, which take no value.
    private static let flags: Set<String> = ["--json"]
    /// The global options, which take a value.
    private static let options: Set<String> = ["--gateway", "--profile", "--timeout"]

    /// Whether `arguments` (a command line as typed) ask for `--json`, read before parsing —
    /// so that even a command line that does not parse reports its error as JSON.
    static func asksForJSON(_ arguments: [String]) -> Bool {
        arguments[..<(arguments.firstIndex(of: "--") ?? arguments.endIndex)].contains("--json")
    }

    // MARK: Running

    /// Runs `body` with a client of the gateway of the profile in use, closing the client
    /// afterwards; see ``withContext(paths:gateway:_:)``.
    func withContext<Result>(_ body: (CommandContext) async throws -> Result) async throws -> Result {
        try await withContext(paths: try paths, gateway: try gatewayChoice().address, body)
    }

    /// How shopctl connects to the gateway: the defaults, but a reconnect backoff shorter than
    /// the shortest of ``CallRetry``'s delays (100 ms). shopctl paces its retries itself; with
    /// the default backoff (100 ms ±20 %) a retry drawn early would find the connection still
    /// backing off and fail without trying, one attempt of the few lost.
    static var gatewayConnection: ClientConfiguration {
        var configuration = ClientConfiguration()
        configuration.reconnectInitialBackoff = .milliseconds(50)
        return configuration
    }

    /// Runs `body` with a client of `gateway` and the files of `paths`, closing the client
    /// afterwards. A failure that ends the session (`SESSION_REVOKED`, `SESSION_ENDED`)
    /// removes the stored credentials before it is reported — when they still hold the
    /// session this run used (``CredentialsStore/forgetSessionInUse(lockTimeout:)``).
    func withContext<Result>(
        paths: ConfigPaths, gateway: SocketAddressText, _ body: (CommandContext) async throws -> Result
    ) async throws -> Result {
        let client = try RPCClient(target: gateway, configuration: Self.gatewayConnection)
        let store = CredentialsStore(paths: paths)
        let context = CommandContext(
            gateway: GatewayClient(
                transport: GatewayTransport(client: client, gateway: gateway), store: store,
                timeout: .milliseconds(Int(timeout * 1000))),
            output: Output(json: json), paths: paths)
        do {
            let result = try await body(context)
            await client.close()
            return result
        } catch {
            await client.close()
            if CredentialsStore.endsSession(error) {
                try? await store.forgetSessionInUse()
            }
            throw error
        }
    }
}

/// The gateway a command calls, and which setting chose it (`shopctl config show`).
struct GatewayChoice: Sendable, Equatable {
    /// Which setting gave the address.
    enum Source: Sendable, Equatable, CustomStringConvertible {
        /// `--gateway`.
        case flag
        /// `SHOP_GATEWAY`.
        case environment
        /// The profile's gateway in the settings file.
        case profile(ProfileName)
        /// None: 127.0.0.1:8080.
        case builtIn

        var description: String {
            switch self {
            case .flag: "--gateway"
            case .environment: "SHOP_GATEWAY"
            case .profile(let name): "profile \(name)"
            case .builtIn: "default"
            }
        }
    }

    /// The address.
    let address: SocketAddressText
    /// Where it came from.
    let source: Source
}

/// What a running command works with: the gateway, the output, and shopctl's files.
struct CommandContext: Sendable {
    /// Calls to the gateway.
    let gateway: GatewayClient
    /// Standard output, human or JSON.
    let output: Output
    /// Where the profile's credentials and shipping address live.
    let paths: ConfigPaths

    /// The credentials file.
    var store: CredentialsStore { gateway.store }
}
