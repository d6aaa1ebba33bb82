@testable import catalog_svc
import ContractTesting
import Contracts
import Foundation
import RPC
import RPCHTTP2
import Testing
import JSON

/// The proof that provider verification catches drift: basket-svc's contract replayed against
/// the real catalog-svc behind a proxy that serves a scratch copy of its answers with
/// `Product.title` renamed to `name` and `Product.price` turned into a string — what a careless
/// change to the provider would send. Verification must fail with a diff that names both.
@Suite("Broken provider")
struct BrokenProviderLiveTests {
    /// A proxy in front of `upstream` that passes each request through and rewrites the
    /// product of each answer with `rewrite`.
    static func startProxy(
        to upstream: SocketAddressText, rewrite: @escaping @Sendable ([String: JSONValue]) -> [String: JSONValue]
    ) throws -> (HTTP2Server, SocketAddressText) {
        var router = Router()
        router.register(CatalogContract.getProduct.info) { io, context in
            var messages: [JSONValue] = []
            while let data = try await io.nextMessage() { messages.append(try JSONCodec.shared.decode(JSONValue.self, from: data)) }
            let outcome = await RequestReplay.send(
                path: context.method.path, metadata: context.metadata, message: messages.first ?? .object([:]), to: upstream)
            switch outcome {
            case .messages(let answers), .openStream(let answers):
                for answer in answers {
                    var members = answer.objectMembers
                    members["product"] = .object(rewrite(members["product"]?.objectMembers ?? [:]))
                    try await io.write(try JSONCodec.shared.encode(JSONValue.object(members)))
                }
            case .failure(let code, let reason, let message):
                throw RPCError(code: code, reason: reason, message: message)
            }
        }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.loopCount = 1
        configuration.gracePeriod = .seconds(1)
        let server = try HTTP2Server(configuration: configuration, router: router, logger: ContractLogging.quiet)
        let port = try server.start()
        return (server, SocketAddressText(host: "127.0.0.1", port: port))
    }

    /// catalog-svc's verifier with the proxy in front of each fresh catalog.
    static func brokenVerifier(
        rewrite: @escaping @Sendable ([String: JSONValue]) -> [String: JSONValue]
    ) -> ProviderVerifier<CatalogServer> {
        ProviderVerifier(provider: "catalog-svc", states: CatalogProvider.states) {
            let real = try await CatalogProvider.start()
            let (proxy, address) = try startProxy(to: real.address, rewrite: rewrite)
            return RunningProvider(provider: real.provider, address: address, values: real.values) {
                await proxy.shutdown()
                await real.stop()
            }
        }
    }

    @Test("the untouched proxy passes, so the failure below is the rewrite's doing")
    func untouchedProxyPasses() async throws {
        let contract = try #require(try ContractFiles.load(consumer: "basket-svc", provider: "catalog-svc"))
        let report = await Self.brokenVerifier { $0 }.verify(contract)
        #expect(report.passed, "\(report)")
    }

    @Test("a renamed and a retyped Product field fail verification with a readable diff")
    func brokenProviderFails() async throws {
        let contract = try #require(try ContractFiles.load(consumer: "basket-svc", provider: "catalog-svc"))
        let report = await Self.brokenVerifier { product in
            var product = product
            product["name"] = product.removeValue(forKey: "title")
            if case .object(let price)? = product["price"], case .number(let amount)? = price["amount"] {
                product["price"] = .string(String(format: "%.2f", amount / 100))
            }
            return product
        }.verify(contract)

        #expect(!report.passed)
        #expect(
            report.failures.map(\.interaction.description)
                == ["GetProduct of a product in the catalog", "GetProduct of a product with little stock"])
        let text = report.description
        #expect(text.contains("catalog-svc against the contract of basket-svc (Tests/Contracts/basket-svc/catalog-svc.json): 2 of 3 interactions failed"), "\(text)")
        #expect(text.contains(#"FAIL "GetProduct of a product in the catalog" given "a product exists""#), "\(text)")
        #expect(
            text.contains(
                """
                         $.product.price
                             expected an object like {"amount":4999,"currency":"USD"} (by type)
                             actual   a string "49.99"
                """), "\(text)")
        #expect(
            text.contains(
                """
                         $.product.title
                             expected a string like "Everyday Backpack" (by type)
                             actual   nothing (the field is missing)
                """), "\(text)")
        #expect(text.contains(#"ok   "GetProduct of a product the catalog does not have""#), "\(text)")
    }
}
