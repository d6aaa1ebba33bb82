internal import RPC
import JSON

/// Replays a consumer's contract against the real provider: for each interaction a fresh
/// provider, its states set up by the hooks, the request sent over a real loopback connection
/// with ``RPCClient``, the outcome checked with the interaction's matchers. A response stream
/// is read message by message; a message that comes only after something happens has its
/// state set up, by the same hooks, once the message before it was read, and a stream that
/// stays open (a watch) is cancelled after the messages the contract lists.
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

    /// Verifies every interaction of `contract`, one fresh provider each, sent over the
    /// contract's wire.
    package func verify(_ contract: Contract) async -> VerificationReport {
        var results: [InteractionResult] = []
        for interaction in contract.interactions {
            results.append(await verify(interaction, over: contract.wire))
        }
        return VerificationReport(consumer: contract.consumer, provider: provider, results: results)
    }

    /// Verifies one interaction on a fresh provider, its request sent over `wire`.
    package func verify(_ interaction: Interaction, over wire: ContractWire = .grpc) async -> InteractionResult {
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
            guard let hook = hook(for: state, into: &result) else { continue }
            do {
                values.merge(try await hook(running.provider, state.params)) { _, new in new }
            } catch {
                result.problems.append("setting up \(state) failed: \(error)")
            }
        }
        var midStream: [String: ProviderStates<Provider>.Hook] = [:]
        if case .stream(let stream) = interaction.response {
            for state in stream.midStreamStates { midStream[state.name] = hook(for: state, into: &result) }
        }
        if result.problems.isEmpty {
            do {
                let (metadata, messages) = try RequestReplay.request(for: interaction.request, values: values)
                result.sent = interaction.request.streamsRequests ? .array(messages) : messages.first
                let outcome: CallOutcome
                if case .stream(let stream) = interaction.response {
                    let provider = running.provider
                    outcome = try await RequestReplay.stream(
                        path: interaction.request.path, metadata: metadata, messages: messages, expecting: stream,
                        to: running.address, over: wire
                    ) { state in
                        _ = try await midStream[state.name]?(provider, state.params)
                    }
                } else {
                    outcome = await RequestReplay.send(
                        path: interaction.request.path, metadata: metadata, messages: messages, to: running.address,
                        over: wire)
                }
                result.outcome = outcome
                result.mismatches = try CallMatching.mismatches(of: outcome, against: interaction.response)
            } catch {
                result.problems.append("\(error)")
            }
        }
        await running.stop()
        return result
    }

    /// The hook of `state`, or nil with the problem recorded in `result`.
    private func hook(for state: ProviderState, into result: inout InteractionResult) -> ProviderStates<Provider>.Hook? {
        guard let hook = states.hook(state.name) else {
            result.problems.append(
                "\(provider) has no provider state \"\(state.name)\"; register a hook for it with its ProviderStates "
                    + "(known: \(states.names.map { "\"\($0)\"" }.joined(separator: ", ")))")
            return nil
        }
        return hook
    }
}
