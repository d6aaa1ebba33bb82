package import RPC
package import JSON

/// The hooks that put a provider into the states contracts name, keyed by state name.
///
/// A hook gets the provider (its server built in-process, with its store) and the state's
/// parameters, sets the data up through the provider's own store — never through a network
/// endpoint, so no setup path exists in a normal run — and returns values the replayed
/// request may use through generators (`${accessToken}`).
package struct ProviderStates<Provider: Sendable>: Sendable {
    /// Sets a state up; returns values for generators.
    package typealias Hook = @Sendable (Provider, [String: JSONValue]) async throws -> [String: JSONValue]

    private var hooks: [String: Hook] = [:]

    /// No hooks yet.
    package init() {}

    /// Registers `hook` for the state `name`.
    package mutating func add(_ name: String, _ hook: @escaping Hook) {
        precondition(hooks[name] == nil, "provider state \"\(name)\" is registered twice")
        hooks[name] = hook
    }

    /// The hook of `name`, if registered.
    package func hook(_ name: String) -> Hook? { hooks[name] }

    /// Every registered state name, sorted.
    package var names: [String] { hooks.keys.sorted() }
}

/// A provider started for one interaction: the object the state hooks work on, where it
/// listens, values every interaction may use (its internal key), and how to stop it.
package struct RunningProvider<Provider: Sendable>: Sendable {
    /// What the hooks get, e.g. the in-process server with its store.
    package let provider: Provider
    /// Where it listens.
    package let address: SocketAddressText
    /// Values for generators, e.g. `internalKey`.
    package let values: [String: JSONValue]
    /// Stops it and releases what it holds.
    package let stop: @Sendable () async -> Void

    /// Describes a running provider.
    package init(
        provider: Provider, address: SocketAddressText, values: [String: JSONValue] = [:],
        stop: @escaping @Sendable () async -> Void
    ) {
        self.provider = provider
        self.address = address
        self.values = values
        self.stop = stop
    }
}
