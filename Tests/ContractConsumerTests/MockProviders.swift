import ContractTesting
import RPCHTTP2
import Testing
import RPC

/// The mock providers of one consumer test, by provider name: started together from the
/// consumer's contracts, and finished together — which records as issues of the test every
/// call the contracts do not describe and every served interaction the consumer never made.
struct MockProviders: Sendable {
    /// The consumer under test.
    let consumer: String
    private let mocks: [String: MockProvider]

    /// Where the mock of `provider` listens; a closed port when the test serves it nothing.
    subscript(provider: String) -> SocketAddressText {
        mocks[provider]?.address ?? SocketAddressText(host: "127.0.0.1", port: 9)
    }

    /// Starts a mock per provider serving its interactions, runs `body`, then finishes every
    /// mock, whether `body` threw or not. A consumer speaking Connect gives the `connectEdge`
    /// its calls arrive through (``GatewayConnectEdge``).
    static func run<Result>(
        consumer: String, serving interactions: [String: [InteractionSpec]],
        connectEdge: (@Sendable (Router) -> any WebHandler)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation, _ body: (MockProviders) async throws -> Result
    ) async throws -> Result {
        var mocks: [String: MockProvider] = [:]
        do {
            for (provider, specs) in interactions.sorted(by: { $0.key < $1.key }) {
                mocks[provider] = try await MockProvider.start(
                    consumer: consumer, provider: provider, serving: specs, connectEdge: connectEdge)
            }
        } catch {
            for mock in mocks.values { await mock.stop() }
            throw error
        }
        let providers = MockProviders(consumer: consumer, mocks: mocks)
        do {
            let result = try await body(providers)
            await providers.finish(sourceLocation: sourceLocation)
            return result
        } catch {
            await providers.finish(sourceLocation: sourceLocation)
            throw error
        }
    }

    private func finish(sourceLocation: SourceLocation) async {
        for provider in mocks.keys.sorted() { await mocks[provider]?.finish(sourceLocation: sourceLocation) }
    }
}
