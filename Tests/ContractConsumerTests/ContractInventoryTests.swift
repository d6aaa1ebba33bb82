import ContractTesting
import Contracts
@testable import gateway
import RPC
import Testing

/// Each contract file holds exactly the interactions the consumer tests declare: one a test
/// no longer declares is reported (and removed in record mode), one not yet recorded is
/// reported by the test that serves it. And every streaming method the gateway routes is
/// covered, as a stream, on both of its edges: shopctl → gateway and gateway → its service.
@Suite("Contract inventory")
struct ContractInventoryTests {
    /// One consumer→provider pair and the interactions its tests declare.
    struct Pair: Sendable, CustomTestStringConvertible {
        let consumer: String
        let provider: String
        let declared: @Sendable () throws -> [InteractionSpec]

        var testDescription: String { "\(consumer) → \(provider)" }
    }

    /// Every edge the consumer tests cover: service to service, shopctl's and StorefrontKit's.
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
        Pair(consumer: "storefront-kit", provider: "gateway", declared: StorefrontKitInteractions.all),
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

    /// A streaming method the gateway routes, and the service behind it.
    struct RoutedStream: Sendable, CustomTestStringConvertible {
        /// The method.
        let method: MethodInfo
        /// The service that serves it, as contracts name it.
        let service: String

        var testDescription: String { "\(method.method) (\(method.kind.rawValue), \(service))" }
    }

    /// Every public streaming method the gateway routes (its `RouteTable`), by service.
    static let routedStreams: [RoutedStream] = [
        ("auth-svc", AuthContract.all), ("catalog-svc", CatalogContract.all), ("basket-svc", BasketContract.all),
        ("order-svc", OrderContract.all),
    ].flatMap { service, methods in
        RouteTable.publicMethods(of: methods).filter { $0.kind != .unary }.map { RoutedStream(method: $0, service: service) }
    }

    @Test("there are streaming methods behind the gateway to check")
    func streamsAreRouted() {
        #expect(Set(Self.routedStreams.map(\.method.method)).isSuperset(of: ["WatchAuthState", "WatchBasket", "ImportProducts"]))
    }

    @Test(
        "each streaming method the gateway routes is in shopctl's contract with the gateway and the gateway's with its service, as a stream",
        arguments: routedStreams)
    func streamingMethodCovered(stream: RoutedStream) throws {
        for (consumer, provider) in [("shopctl", "gateway"), ("gateway", stream.service)] {
            let contract = try #require(try ContractFiles.load(consumer: consumer, provider: provider))
            let interactions = contract.interactions.filter { $0.request.path == stream.method.path }
            #expect(!interactions.isEmpty, "\(consumer) → \(provider) has no interaction calling \(stream.method.path)")
            for interaction in interactions {
                let streamsResponses: Bool
                if case .stream = interaction.response { streamsResponses = true } else { streamsResponses = false }
                if stream.method.kind == .serverStreaming || stream.method.kind == .bidirectionalStreaming {
                    #expect(streamsResponses, "\"\(interaction.description)\" of \(consumer) → \(provider) expects no response stream")
                }
                if stream.method.kind == .clientStreaming || stream.method.kind == .bidirectionalStreaming {
                    #expect(
                        interaction.request.streamsRequests,
                        "\"\(interaction.description)\" of \(consumer) → \(provider) sends no request stream")
                }
            }
        }
    }
}
