import ContractTesting
import Testing

/// Each contract file holds exactly the interactions the consumer tests declare: one a test
/// no longer declares is reported (and removed in record mode), one not yet recorded is
/// reported by the test that serves it.
@Suite("Contract inventory")
struct ContractInventoryTests {
    /// One consumer→provider pair and the interactions its tests declare.
    struct Pair: Sendable, CustomTestStringConvertible {
        let consumer: String
        let provider: String
        let declared: @Sendable () throws -> [InteractionSpec]

        var testDescription: String { "\(consumer) → \(provider)" }
    }

    /// Every service-to-service edge the consumer tests cover.
    static let pairs = [
        Pair(consumer: "basket-svc", provider: "catalog-svc", declared: CatalogInteractions.ofBasket),
        Pair(consumer: "basket-svc", provider: "auth-svc", declared: AuthInteractions.all),
        Pair(consumer: "catalog-svc", provider: "auth-svc", declared: AuthInteractions.all),
        Pair(consumer: "order-svc", provider: "basket-svc", declared: BasketInteractions.ofOrder),
        Pair(consumer: "order-svc", provider: "catalog-svc", declared: CatalogInteractions.ofOrder),
        Pair(consumer: "order-svc", provider: "auth-svc", declared: AuthInteractions.all),
        Pair(consumer: "gateway", provider: "auth-svc", declared: GatewayInteractions.ofAuth),
        Pair(consumer: "gateway", provider: "catalog-svc", declared: GatewayInteractions.ofCatalog),
        Pair(consumer: "gateway", provider: "basket-svc", declared: GatewayInteractions.ofBasket),
        Pair(consumer: "gateway", provider: "order-svc", declared: GatewayInteractions.ofOrder),
        Pair(consumer: "shopctl", provider: "gateway", declared: ShopctlInteractions.all),
    ]

    @Test("the contract file holds exactly the declared interactions", arguments: pairs)
    func inventory(pair: Pair) async throws {
        let declared = Set(try pair.declared().map(\.description))
        #expect(declared.count == (try pair.declared().count), "two interactions share a description")
        if ContractMode.current == .record {
            _ = try await ContractRecorder.shared.prune(consumer: pair.consumer, provider: pair.provider, keeping: declared)
            return
        }
        let contract = try #require(
            try ContractFiles.load(consumer: pair.consumer, provider: pair.provider),
            "no contract \(pair.consumer)/\(pair.provider).json: record it with CONTRACT_RECORD=1 swift test --filter ContractConsumerTests")
        let recorded = Set(contract.interactions.map(\.description))
        #expect(
            recorded.subtracting(declared).isEmpty,
            "no test declares \(recorded.subtracting(declared).sorted()) any more: re-record with CONTRACT_RECORD=1 to remove them")
        #expect(
            declared.subtracting(recorded).isEmpty,
            "not recorded yet: \(declared.subtracting(recorded).sorted()); record with CONTRACT_RECORD=1")
    }
}
