/// Replays a consumer's contract against the real provider: for each interaction a fresh
/// provider, its states set up by the hooks, the request sent over a real loopback connection
/// with ``RPCClient``, the outcome checked with the interaction's matchers.
package struct ProviderVerifier<Provider: Sendable>: Sendable {
    /// The provider's name, as contracts spell it.
    package let provider: String
    /// Its state hooks.
    package let states: ProviderStates<Provider>
    /// Starts a fresh provider.
    package let start: @Sendable () async throws -> RunningProvider<Provider>

    /// A verifier of `provider`, started by `start`, with `states`.
    package init(
        provider: String, states: ProviderStates<Provider>,
        start: @escaping @Sendable () async throws -> RunningProvider<Provider>
    ) {
        self.provider = provider
        self.states = states
        self.start = start
    }

    /// Verifies every interaction of `contract`, one fresh provider each.
    package func verify(_ contract: Contract) async -> VerificationReport {
        var results: [InteractionResult] = []
        for interaction in contract.interactions {
            results.append(await verify(interaction))
        }
        return VerificationReport(consumer: contract.consumer, provider: provider, results: results)
    }

    /// Verifies one interaction on a fresh provider.
    package func verify(_ interaction: Interaction) async -> InteractionResult {
        var result = InteractionResult(interaction: interaction)
        let running: RunningProvider<Provider>
        do {
            running = try await start()
        } catch {
            result.problems.append("cannot start \(provider): \(error)")
            return result
        }
        var values = running.values
        for state in interaction.providerStates {
            guard let hook = states.hook(state.name) else {
                result.problems.append(
                    "\(provider) has no provider state \"\(state.name)\"; register a hook for it with its ProviderStates "
                        + "(known: \(states.names.map { "\"\($0)\"" }.joined(separator: ", ")))")
                continue
            }
            do {
                values.merge(try await hook(running.provider, state.params)) { _, new in new }
            } catch {
                result.problems.append("setting up \(state) failed: \(error)")
            }
        }
        if result.problems.isEmpty {
            do {
                let (metadata, message) = try RequestReplay.request(for: interaction.request, values: values)
                result.sent = message
                let outcome = await RequestReplay.send(
                    path: interaction.request.path, metadata: metadata, message: message, to: running.address)
                result.outcome = outcome
                result.mismatches = try CallMatching.mismatches(of: outcome, against: interaction.response)
            } catch {
                result.problems.append("\(error)")
            }
        }
        await running.stop()
        return result
    }
}
