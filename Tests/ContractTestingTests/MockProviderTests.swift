import ContractTesting
import Contracts
import Foundation
import RPC
import RPCHTTP2
import Testing
import JSON

/// The mock provider of consumer tests, over real loopback connections, with contracts in a
/// scratch directory: record mode writes what the consumer sent; verify mode answers from
/// the file and reports anything the contract does not describe.
@Suite("Mock provider")
struct MockProviderTests {
    /// The method every test calls.
    static let path = CatalogContract.getProduct.path

    /// GetProduct of an existing product, answered with it.
    static func productSpec() throws -> InteractionSpec {
        InteractionSpec(
            "GetProduct of product 7", given: [ProviderState("a product exists", ["id": .number(7)])], path: path,
            metadata: ["x-request-id": .regex(Matcher.Pattern.nonEmpty)],
            response: try .message(
                encoding: ProductResponse(
                    product: Product(
                        id: 7, title: "Backpack", description: "Fits a laptop.", category: "bags",
                        price: Money(amount: 1999, currency: "USD"), image: "https://img.example/7.png",
                        rating: Rating(rate: 4.5, count: 10), stock: 3)),
                rules: ["$": Matcher.type.allowingExtraFields]))
    }

    /// GetProduct of a missing product, answered PRODUCT_NOT_FOUND.
    static let missingSpec = InteractionSpec(
        "GetProduct of a product that does not exist", given: [ProviderState("no product has the id", ["id": .number(999)])],
        path: path, response: .status(CatalogReason.productNotFound))

    /// A fresh scratch directory for contract files, removed after `body`.
    func withDirectory(_ body: (URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("contracts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory)
    }

    /// Sends `message` to the mock as a consumer would, with `requestID` as `x-request-id`.
    func send(_ message: JSONValue, to mock: MockProvider, path: String = path, requestID: String? = "req-1") async -> CallOutcome {
        var metadata = Metadata()
        if let requestID { metadata.set(MetadataKey.requestID, requestID) }
        return await RequestReplay.send(path: path, metadata: metadata, message: message, to: mock.address)
    }

    /// Records both interactions into `directory` as a consumer sending `{"id": 7}` and `{"id": 999}`.
    func record(in directory: URL) async throws {
        let mock = try await MockProvider.start(
            consumer: "test-consumer", provider: "catalog-svc", serving: [try Self.productSpec(), Self.missingSpec],
            mode: .record, directory: directory)
        _ = await send(.object(["id": .number(7)]), to: mock)
        _ = await send(.object(["id": .number(999)]), to: mock)
        #expect(await mock.stop() == [])
    }

    @Test("record mode writes each interaction with the request the consumer sent")
    func recordWritesFile() async throws {
        try await withDirectory { directory in
            try await record(in: directory)
            let contract = try #require(try ContractFiles.load(consumer: "test-consumer", provider: "catalog-svc", in: directory))
            #expect(contract.interactions.map(\.description) == ["GetProduct of a product that does not exist", "GetProduct of product 7"])
            let product = try #require(contract.interaction("GetProduct of product 7"))
            #expect(product.request.message == .object(["id": .number(7)]))
            #expect(product.request.metadata == ["x-request-id": "req-1"])
            #expect(product.providerStates == [ProviderState("a product exists", ["id": .number(7)])])
            let text = try String(contentsOf: ContractFiles.url(consumer: "test-consumer", provider: "catalog-svc", in: directory), encoding: .utf8)
            #expect(text.contains(#""match" : "regex""#) || text.contains(#""match": "regex""#))
        }
    }

    @Test("in verify mode the consumer gets the contract's answers and nothing is reported")
    func verifyServesContract() async throws {
        try await withDirectory { directory in
            try await record(in: directory)
            let mock = try await MockProvider.start(
                consumer: "test-consumer", provider: "catalog-svc", serving: [try Self.productSpec(), Self.missingSpec],
                directory: directory)
            let found = await send(.object(["id": .number(7)]), to: mock, requestID: "another-id")
            guard case .messages(let messages) = found else {
                Issue.record("expected the product, got \(found.summary)")
                return
            }
            #expect(messages.first?["product"]?["title"] == .string("Backpack"))
            #expect(
                await send(.object(["id": .number(999)]), to: mock)
                    == .failure(code: .notFound, reason: "PRODUCT_NOT_FOUND", message: "As the contract with test-consumer says."))
            #expect(await mock.stop() == [])
        }
    }

    @Test("a request carrying a field the contract does not describe is refused and reported with its path")
    func undescribedField() async throws {
        try await withDirectory { directory in
            try await record(in: directory)
            let mock = try await MockProvider.start(
                consumer: "test-consumer", provider: "catalog-svc", serving: [try Self.productSpec()], directory: directory)
            let outcome = await send(.object(["id": .number(7), "locale": .string("de")]), to: mock)
            guard case .failure(let code, let reason, _) = outcome else {
                Issue.record("expected a refusal, got \(outcome.summary)")
                return
            }
            #expect(code == .unimplemented && reason == "NOT_IN_CONTRACT")
            let problems = await mock.stop()
            #expect(problems.count == 2, "\(problems)")
            #expect(
                problems.first?.contains(
                    #"$.locale: expected no such field (the contract allows no extra fields here), actual a string "de""#)
                    == true, "\(problems)")
            #expect(problems.last == #"test-consumer never made the call "GetProduct of product 7" that the test serves"#)
        }
    }

    @Test("a different value, missing metadata and an unknown method are each reported")
    func otherViolations() async throws {
        try await withDirectory { directory in
            try await record(in: directory)
            let mock = try await MockProvider.start(
                consumer: "test-consumer", provider: "catalog-svc", serving: [try Self.productSpec()], directory: directory)
            _ = await send(.object(["id": .number(8)]), to: mock)
            _ = await send(.object(["id": .number(7)]), to: mock, requestID: nil)
            _ = await send(.object([:]), to: mock, path: CatalogContract.listCategories.path)
            let problems = await mock.stop()
            #expect(problems.count == 4, "\(problems)")
            #expect(problems.contains { $0.contains("$.id: expected 7, actual a number 8") })
            #expect(problems.contains { $0.contains("metadata 'x-request-id': expected a value matching /.+/, actual nothing (not sent)") })
            #expect(problems.contains { $0.contains("called /shop.catalog.v1.CatalogService/ListCategories, which no interaction") })
        }
    }

    @Test("a test whose declaration no longer matches the file is told to re-record, and a missing one to record")
    func staleContract() async throws {
        try await withDirectory { directory in
            try await record(in: directory)
            var changed = try Self.productSpec()
            changed.providerStates = [ProviderState("a product exists", ["id": .number(8)])]
            let fresh = InteractionSpec("ListCategories", path: CatalogContract.listCategories.path, response: .message(.object([:]), rules: [:]))
            let mock = try await MockProvider.start(
                consumer: "test-consumer", provider: "catalog-svc", serving: [changed, fresh], directory: directory)
            _ = await send(.object(["id": .number(7)]), to: mock)
            _ = await send(.object([:]), to: mock, path: CatalogContract.listCategories.path)
            let problems = await mock.stop()
            #expect(problems.count == 2, "\(problems)")
            #expect(problems.contains { $0.contains("is out of date for \"GetProduct of product 7\": provider states") })
            #expect(problems.contains { $0.contains("has no interaction \"ListCategories\". Record it: CONTRACT_RECORD=1") })
        }
    }

    /// A web edge that knows no procedure: enough to make a mock one of a Connect consumer.
    struct NoProcedures: WebHandler {
        func serve(_ request: WebRequest, response: any WebResponse) {
            response.send(status: 404, headers: WebHeaders(), body: Data())
        }
    }

    @Test("a mock with a Connect edge records the contract as Connect's, and one recorded over gRPC is told to re-record")
    func connectWire() async throws {
        try await withDirectory { directory in
            try await record(in: directory)
            let grpcText = try String(
                contentsOf: ContractFiles.url(consumer: "test-consumer", provider: "catalog-svc", in: directory), encoding: .utf8)
            #expect(!grpcText.contains("\"wire\""), "a gRPC contract is written as before")
            let stale = try await MockProvider.start(
                consumer: "test-consumer", provider: "catalog-svc", serving: [try Self.productSpec()], directory: directory,
                connectEdge: { _ in NoProcedures() })
            _ = await send(.object(["id": .number(7)]), to: stale)
            let problems = await stale.stop()
            #expect(problems.contains { $0.contains("says its calls travel over grpc, the test's over connect") }, "\(problems)")

            let recording = try await MockProvider.start(
                consumer: "connect-consumer", provider: "catalog-svc", serving: [try Self.productSpec()], mode: .record,
                directory: directory, connectEdge: { _ in NoProcedures() })
            _ = await send(.object(["id": .number(7)]), to: recording)
            #expect(await recording.stop() == [])
            let contract = try #require(try ContractFiles.load(consumer: "connect-consumer", provider: "catalog-svc", in: directory))
            #expect(contract.wire == .connect)
            let connectText = try String(
                contentsOf: ContractFiles.url(consumer: "connect-consumer", provider: "catalog-svc", in: directory), encoding: .utf8)
            #expect(connectText.contains(#""wire" : "connect""#), "\(connectText)")
        }
    }

    @Test("pruning removes interactions no test declares any more")
    func prune() async throws {
        try await withDirectory { directory in
            try await record(in: directory)
            let removed = try await ContractRecorder.shared.prune(
                consumer: "test-consumer", provider: "catalog-svc", keeping: ["GetProduct of product 7"], in: directory)
            #expect(removed == ["GetProduct of a product that does not exist"])
            let contract = try #require(try ContractFiles.load(consumer: "test-consumer", provider: "catalog-svc", in: directory))
            #expect(contract.interactions.map(\.description) == ["GetProduct of product 7"])
        }
    }
}
