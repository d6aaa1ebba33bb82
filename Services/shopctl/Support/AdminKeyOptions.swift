import ArgumentParser
import RPC

/// `--api-key`, falling back to `SHOP_ADMIN_API_KEY` at run time: the admin commands and `call`
/// share it.
///
/// The option's declared default is nil on purpose: swift-argument-parser prints a default
/// value in `--help`, and a default read from the environment would print the key itself.
/// Help names the variable instead, as `(env SHOP_ADMIN_API_KEY)`.
struct AdminKeyOptions: ParsableArguments {
    /// The environment variable the key falls back to.
    static let environmentVariable = "SHOP_ADMIN_API_KEY"

    /// The key as given on the command line.
    @Option(
        name: .customLong("api-key"),
        help: ArgumentHelp(
            "The admin API key; set it in the environment to keep it out of the process list. (env \(environmentVariable))",
            valueName: "key"))
    var given: String?

    /// The key to send: `--api-key`, else `SHOP_ADMIN_API_KEY`; nil when neither is set.
    var key: String? {
        let key = given ?? ProcessContext.current.environment[Self.environmentVariable]
        return key?.isEmpty == false ? key : nil
    }

    /// Refuses to go on without a key, for commands that cannot work without one.
    func requireKey() throws {
        guard key != nil else {
            throw ValidationError("The admin API key is missing: set \(Self.environmentVariable) or pass --api-key.")
        }
    }

    /// `x-api-key: <key>` when there is a key; empty metadata otherwise (the server then answers
    /// `MISSING_API_KEY`).
    var metadata: Metadata {
        var metadata = Metadata()
        if let key { metadata.set(MetadataKey.apiKey, key) }
        return metadata
    }
}
