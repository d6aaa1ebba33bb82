import ContractTesting
import Contracts
import Foundation
import RPC
import RPCHTTP2
import Synchronization
import Testing
import JSON

/// The provider side on a stub provider built in the test: states set through hooks, the
/// request replayed over loopback, generators filled from the states, and a readable report.
@Suite("Provider verifier")
struct ProviderVerifierTests {
    /// A catalog stand-in: `GetProduct` answers the products its state hooks stored, as JSON
    /// passed through `rewrite`; it asks for `authorization` equal to its token.
    final class StubCatalog: Sendable {
        /// The products the state hooks stored, by id.
        let products = Mutex<[Int: JSONValue]>([:])
        /// What becomes of a product on its way out.
        let rewrite: @Sendable (JSONValue) -> JSONValue

        /// A stub passing its products through `rewrite`.
        init(rewrite: @escaping @Sendable (JSONValue) -> JSONValue = { $0 }) { self.rewrite = rewrite }

        /// The stub's one method.
        func router() -> Router {
            var router = Router()
            router.register(CatalogContract.getProduct.info) { io, context in
                guard let data = try await io.nextMessage() else { return }
                let request = try JSONCodec.shared.decode(GetProductRequest.self, from: data)
                guard context.metadata[MetadataKey.authorization] == "Bearer stub-token" else {
                    throw RPCError(code: .unauthenticated, reason: "MISSING_TOKEN", message: "no token")
                }
                guard let product = self.products.withLock({ $0[request.id] }) else {
                    throw CatalogReason.productNotFound.error("No product \(request.id).")
                }
                try await io.write(try JSONCodec.shared.encode(JSONValue.object(["product": self.rewrite(product)])))
            }
            return router
        }
    }

    /// The product of the state "a product exists".
    static let product = Product(
        id: 7, title: "Backpack", description: "Fits a laptop.", category: "bags", price: Money(amount: 1999, currency: "USD"),
        image: "https://img.example/7.png", rating: Rating(rate: 4.5, count: 10), stock: 3)

    /// A consumer's contract with the stub: a product found (id and token from the states), one not.
    static func contract() throws -> Contract {
        let request = { (id: Int) in
            RequestExpectation(
                path: CatalogContract.getProduct.path, metadata: ["authorization": "Bearer recorded-token"],
                message: .object(["id": .number(Double(id))]),
                matchingRules: RequestMatchingRules(metadata: ["authorization": .regex("Bearer .+")]),
                generators: Generators(metadata: ["authorization": "Bearer ${token}"], message: ["$.id": "${productId}"]))
        }
        return Contract(
            consumer: "test-consumer", provider: "stub-catalog",
            interactions: [
                Interaction(
                    description: "GetProduct of a product the catalog has",
                    providerStates: [ProviderState("a product exists", try JSONValue(encoding: product).objectMembers)],
                    request: request(1),
                    response: .message(
                        try JSONValue(encoding: ProductResponse(product: product)),
                        rules: ["$": Matcher.type.allowingExtraFields, "$.product.id": .equality])),
                Interaction(
                    description: "GetProduct of a product the catalog does not have",
                    providerStates: [ProviderState("no product has the id", ["id": .number(999)])],
                    request: request(999), response: .status(CatalogReason.productNotFound)),
            ])
    }

    /// The verifier of `stub`, with the standard hooks unless `states` are given.
    static func verifier(_ stub: StubCatalog, states: ProviderStates<StubCatalog>? = nil) -> ProviderVerifier<StubCatalog> {
        var standard = ProviderStates<StubCatalog>()
        standard.add("a product exists") { stub, params in
            let id = try #require(params["id"].flatMap { if case .number(let n) = $0 { Int(n) } else { nil } })
            stub.products.withLock { $0[id] = .object(params) }
            return ["productId": .number(Double(id)), "token": .string("stub-token")]
        }
        standard.add("no product has the id") { stub, params in
            ["productId": params["id"] ?? .null, "token": .string("stub-token")]
        }
        return ProviderVerifier(provider: "stub-catalog", states: states ?? standard) {
            var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
            configuration.loopCount = 1
            configuration.gracePeriod = .seconds(1)
            let server = try HTTP2Server(configuration: configuration, router: stub.router(), logger: ContractLogging.quiet)
            let port = try server.start()
            return RunningProvider(provider: stub, address: SocketAddressText(host: "127.0.0.1", port: port)) {
                await server.shutdown()
            }
        }
    }

    @Test("a provider that honours the contract passes, with generators filling token and id from the states")
    func faithfulProviderPasses() async throws {
        let report = await Self.verifier(StubCatalog()).verify(try Self.contract())
        #expect(report.passed, "\(report)")
        #expect(report.results.map(\.sent) == [.object(["id": .number(999)]), .object(["id": .number(7)])])
    }

    @Test("a renamed and a retyped field fail verification with a diff naming path, expectation and actual value")
    func driftedProviderFails() async throws {
        let drifted = StubCatalog { product in
            var members = product.objectMembers
            members["name"] = members.removeValue(forKey: "title")
            members["price"] = .string("19.99")
            return .object(members)
        }
        let report = await Self.verifier(drifted).verify(try Self.contract())
        #expect(!report.passed)
        #expect(report.failures.map(\.interaction.description) == ["GetProduct of a product the catalog has"])
        let text = report.description
        #expect(text.contains("stub-catalog against the contract of test-consumer"))
        #expect(text.contains("1 of 2 interactions failed"))
        #expect(text.contains(#"FAIL "GetProduct of a product the catalog has" given "a product exists""#))
        #expect(
            text.contains(
                """
                         $.product.price
                             expected an object like {"amount":1999,"currency":"USD"} (by type)
                             actual   a string "19.99"
                """), "\(text)")
        #expect(
            text.contains(
                """
                         $.product.title
                             expected a string like "Backpack" (by type)
                             actual   nothing (the field is missing)
                """), "\(text)")
        #expect(text.contains(#"ok   "GetProduct of a product the catalog does not have""#))
    }

    @Test("a contract of a consumer speaking Connect is replayed over Connect: a provider serving only gRPC fails it")
    func connectContractReplayedOverConnect() async throws {
        var contract = try Self.contract()
        contract.wire = .connect
        let report = await Self.verifier(StubCatalog()).verify(contract)
        #expect(report.failures.count == 2, "\(report)")
        let answeredOverGRPC = report.results.filter { result in
            if case .failure? = result.outcome { false } else { true }
        }
        #expect(answeredOverGRPC.isEmpty, "\(report)")
    }

    @Test("a state without a hook, or a generator without a value, is reported rather than replayed")
    func missingHookAndValue() async throws {
        var states = ProviderStates<StubCatalog>()
        states.add("no product has the id") { _, _ in [:] }
        let report = await Self.verifier(StubCatalog(), states: states).verify(try Self.contract())
        #expect(report.failures.count == 2)
        let text = report.description
        #expect(text.contains(#"stub-catalog has no provider state "a product exists"; register a hook"#), "\(text)")
        #expect(text.contains("the generator for metadata 'authorization' needs ${token}"), "\(text)")
    }
}
