import ContractTesting
import Testing

/// Every consumer's contract replayed against the real provider it names, one fresh
/// provider per interaction. New consumer contracts are picked up from `Tests/Contracts/`
/// without a change here; a state they name that the provider has no hook for fails.
@Suite("Provider verification", .serialized)
struct ProviderVerificationLiveTests {
    /// The consumers each provider must have contracts from: the service-to-service edges, the
    /// gateway's, shopctl's and StorefrontKit's (over Connect).
    static let expectedConsumers = [
        "auth-svc": ["basket-svc", "catalog-svc", "gateway", "order-svc"],
        "catalog-svc": ["basket-svc", "gateway", "order-svc"],
        "basket-svc": ["gateway", "order-svc"],
        "order-svc": ["gateway"],
        "gateway": ["shopctl", "storefront-kit"],
    ]

    @Test("each provider has the contracts of the consumers that call it", arguments: expectedConsumers.keys.sorted())
    func contractsExist(provider: String) {
        let found = Set(ContractFiles.consumers(of: provider))
        for consumer in Self.expectedConsumers[provider] ?? [] {
            #expect(found.contains(consumer), "no Tests/Contracts/\(consumer)/\(provider).json")
        }
    }

    @Test("catalog-svc honours the contract of", arguments: ContractFiles.consumers(of: "catalog-svc"))
    func catalog(consumer: String) async throws {
        let contract = try #require(try ContractFiles.load(consumer: consumer, provider: "catalog-svc"))
        await CatalogProvider.verifier.verify(contract).expectPassed()
    }

    @Test("auth-svc honours the contract of", arguments: ContractFiles.consumers(of: "auth-svc"))
    func auth(consumer: String) async throws {
        let contract = try #require(try ContractFiles.load(consumer: consumer, provider: "auth-svc"))
        await AuthProvider.verifier.verify(contract).expectPassed()
    }

    @Test("basket-svc honours the contract of", arguments: ContractFiles.consumers(of: "basket-svc"))
    func basket(consumer: String) async throws {
        let contract = try #require(try ContractFiles.load(consumer: consumer, provider: "basket-svc"))
        await BasketProvider.verifier.verify(contract).expectPassed()
    }

    @Test("order-svc honours the contract of", arguments: ContractFiles.consumers(of: "order-svc"))
    func order(consumer: String) async throws {
        let contract = try #require(try ContractFiles.load(consumer: consumer, provider: "order-svc"))
        await OrderProvider.verifier.verify(contract).expectPassed()
    }

    @Test("the gateway honours the contract of", arguments: ContractFiles.consumers(of: "gateway"))
    func gateway(consumer: String) async throws {
        let contract = try #require(try ContractFiles.load(consumer: consumer, provider: "gateway"))
        await GatewayProvider.verifier.verify(contract).expectPassed()
    }
}
