import ContractTesting
import Contracts
import Foundation
import RPC
import RPCHTTP2
import Testing
import JSON

/// Streaming interactions end to end in the framework: the file format, the mock provider
/// serving a response stream and checking a request stream, and the verifier reading a watch
/// message by message with a provider state applied mid-stream.
@Suite("Streaming contracts")
struct StreamingContractTests {
    /// A watch of a count: the count now, then the count after a change the provider makes.
    static func watchSpec(end: StreamEnd = .open) throws -> InteractionSpec {
        InteractionSpec(
            "Watch of a count through one change", given: [ProviderState("the count is 1")],
            path: BasketContract.watchBasket.path,
            response: .stream(
                [
                    StreamedMessage(.object(["itemCount": .number(1)]), rules: ["$": Matcher.type.allowingExtraFields]),
                    StreamedMessage(
                        .object(["itemCount": .number(2)]), rules: ["$.itemCount": .equality],
                        after: ProviderState("an item is added")),
                ], then: end))
    }

    /// An import of products: a stream of request messages, one answer.
    static let importSpec = InteractionSpec(
        "Import of two products", path: CatalogContract.importProducts.path,
        response: .message(.object(["created": .number(2)]), rules: [:]))

    /// The two messages of the import, titled `first` and `second`.
    static func importMessages(_ first: String = "Backpack", _ second: String = "Lamp") -> [JSONValue] {
        [first, second].map { .object(["product": .object(["title": .string($0)])]) }
    }

    /// A fresh scratch directory for contract files, removed after `body`.
    func withDirectory(_ body: (URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("contracts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory)
    }

    @Test("a streaming interaction is written and read back as it was, and a file without streams reads as before")
    func fileFormat() throws {
        let stream = try Self.watchSpec().interaction(metadata: [:], message: .object([:]))
        let failing = try Self.watchSpec(end: .failure(code: .unauthenticated, reason: "SESSION_REVOKED")).interaction(
            metadata: [:], message: .object([:]))
        var renamed = failing
        renamed.description = "Watch that fails"
        let imports = Self.importSpec.interaction(metadata: [:], messages: Self.importMessages())
        let contract = Contract(consumer: "test-consumer", provider: "test-provider", interactions: [stream, renamed, imports])
        let data = try ContractFiles.encode(contract)
        #expect(try JSONDecoder().decode(Contract.self, from: data) == contract)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""staysOpen" : true"#))
        #expect(text.contains(#""after" : {"#))
        #expect(text.contains(#""reason" : "SESSION_REVOKED""#))
        #expect(imports.request.streamsRequests && imports.request.messages.count == 2)

        let unary = #"""
            {"consumer": "c", "provider": "p", "format": "storefront-contract/1", "interactions": [{
              "description": "one", "providerStates": [],
              "request": {"path": "/shop.catalog.v1.CatalogService/GetProduct", "message": {"id": 7}},
              "response": {"message": {"product": {}}, "matchingRules": {}}}]}
            """#
        let old = try JSONDecoder().decode(Contract.self, from: Data(unary.utf8))
        #expect(old.interactions[0].request.streamsRequests == false)
        #expect(old.interactions[0].request.messages == [.object(["id": .number(7)])])
        #expect(old.interactions[0].response == .message(.object(["product": .object([:])]), rules: [:]))
    }

    @Test("the mock sends a stream's messages and holds a watch open until the consumer cancels it", .timeLimit(.minutes(1)))
    func mockServesStream() async throws {
        try await withDirectory { directory in
            let mock = try await MockProvider.start(
                consumer: "test-consumer", provider: "test-provider", serving: [try Self.watchSpec()], mode: .record,
                directory: directory)
            let client = try RPCClient(target: mock.address)
            let counts = try await client.withCall(path: BasketContract.watchBasket.path, options: CallOptions()) { call in
                try await call.send(try JSONCodec.shared.encode(JSONValue.object([:])))
                call.finishSending()
                var counts: [JSONValue] = []
                while counts.count < 2, let data = try await call.nextMessage() {
                    counts.append(try JSONCodec.shared.decode(JSONValue.self, from: data)["itemCount"] ?? .null)
                }
                // Nothing more comes — no message, no end — until the cancel: a third read is
                // still waiting when a short wait is over (no event marks "nothing happened").
                let third = await withTaskGroup(of: String.self) { group in
                    group.addTask {
                        do {
                            return try await call.nextMessage() == nil ? "the end of the stream" : "a message"
                        } catch {
                            return "still open"
                        }
                    }
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(300))
                        return "still open"
                    }
                    let first = await group.next() ?? ""
                    call.cancel()
                    return first
                }
                #expect(third == "still open")
                return counts
            }
            await client.close()
            #expect(counts == [.number(1), .number(2)])
            #expect(await mock.stop() == [])
        }
    }

    @Test("a stream that ends is answered in full, its status last")
    func mockEndsStream() async throws {
        try await withDirectory { directory in
            let spec = try Self.watchSpec(end: .failure(code: .unauthenticated, reason: "SESSION_REVOKED"))
            let mock = try await MockProvider.start(
                consumer: "test-consumer", provider: "test-provider", serving: [spec], mode: .record, directory: directory)
            let outcome = await RequestReplay.send(
                path: BasketContract.watchBasket.path, metadata: Metadata(), message: .object([:]), to: mock.address)
            #expect(outcome == .failure(code: .unauthenticated, reason: "SESSION_REVOKED", message: "As the contract with test-consumer says."))
            #expect(await mock.stop() == [])
        }
    }

    @Test("every message of a client stream is checked against the contract, and their number")
    func mockChecksRequestStream() async throws {
        try await withDirectory { directory in
            let recorder = try await MockProvider.start(
                consumer: "test-consumer", provider: "test-provider", serving: [Self.importSpec], mode: .record,
                directory: directory)
            let path = CatalogContract.importProducts.path
            _ = await RequestReplay.send(path: path, metadata: Metadata(), messages: Self.importMessages(), to: recorder.address)
            #expect(await recorder.stop() == [])
            let recorded = try #require(try ContractFiles.load(consumer: "test-consumer", provider: "test-provider", in: directory))
            #expect(recorded.interactions.first?.request.messages == Self.importMessages())

            let mock = try await MockProvider.start(
                consumer: "test-consumer", provider: "test-provider", serving: [Self.importSpec], directory: directory)
            let faithful = await RequestReplay.send(
                path: path, metadata: Metadata(), messages: Self.importMessages(), to: mock.address)
            #expect(faithful == .messages([.object(["created": .number(2)])]))
            _ = await RequestReplay.send(
                path: path, metadata: Metadata(), messages: Self.importMessages("Backpack", "Desk Lamp"), to: mock.address)
            _ = await RequestReplay.send(
                path: path, metadata: Metadata(), messages: Self.importMessages() + Self.importMessages(), to: mock.address)
            let problems = await mock.stop()
            #expect(problems.count == 2, "\(problems)")
            #expect(problems.contains { $0.contains(#"message 2: $.product.title: expected "Lamp", actual a string "Desk Lamp""#) })
            #expect(problems.contains { $0.contains("request stream: expected 2 messages, actual 4 messages") })
        }
    }

    /// A provider of the watch: it sends the count, then each change its state hook makes —
    /// or, when `endsEarly`, ends the stream after the first message.
    final class StubWatch: Sendable {
        /// The changes the state hook makes, which the open watch sends on.
        let changes = AsyncStream<Int>.makeStream()
        /// Whether the watch ends after its first message instead of waiting for changes.
        let endsEarly: Bool

        /// A stub that waits for changes, or ends early.
        init(endsEarly: Bool = false) { self.endsEarly = endsEarly }

        /// The verifier of this stub, with hooks for "the count is 1" and "an item is added".
        func verifier() -> ProviderVerifier<StubWatch> {
            var states = ProviderStates<StubWatch>()
            states.add("the count is 1") { _, _ in [:] }
            states.add("an item is added") { stub, _ in
                stub.changes.continuation.yield(2)
                return [:]
            }
            return ProviderVerifier(provider: "stub-watch", states: states) { [self] in
                var router = Router()
                router.register(BasketContract.watchBasket.info) { io, _ in
                    _ = try await Router.singleRawRequest(from: io)
                    try await io.write(try JSONCodec.shared.encode(JSONValue.object(["itemCount": .number(1)])))
                    if self.endsEarly { return }
                    for await count in self.changes.stream {
                        try await io.write(try JSONCodec.shared.encode(JSONValue.object(["itemCount": .number(Double(count))])))
                    }
                }
                var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
                configuration.loopCount = 1
                configuration.gracePeriod = .seconds(1)
                let server = try HTTP2Server(configuration: configuration, router: router, logger: ContractLogging.quiet)
                let port = try server.start()
                return RunningProvider(provider: self, address: SocketAddressText(host: "127.0.0.1", port: port)) {
                    await server.shutdown()
                }
            }
        }
    }

    @Test("the verifier reads a watch message by message, makes its change mid-stream, then cancels it", .timeLimit(.minutes(1)))
    func verifierReadsWatch() async throws {
        let watch = try Self.watchSpec().interaction(metadata: [:], message: .object([:]))
        let report = await StubWatch().verifier().verify(
            Contract(consumer: "test-consumer", provider: "stub-watch", interactions: [watch]))
        #expect(report.passed, "\(report)")
        #expect(report.results.first?.outcome == .openStream([.object(["itemCount": .number(1)]), .object(["itemCount": .number(2)])]))
        #expect(report.description.contains(#"then mid-stream "an item is added""#), "\(report)")
    }

    @Test("a watch that ends before its change fails verification with the count and end of the stream")
    func verifierReportsShortStream() async throws {
        let watch = try Self.watchSpec().interaction(metadata: [:], message: .object([:]))
        let report = await StubWatch(endsEarly: true).verifier().verify(
            Contract(consumer: "test-consumer", provider: "stub-watch", interactions: [watch]))
        #expect(!report.passed)
        #expect(
            report.description.contains(
                """
                         response stream
                             expected 2 messages, then the stream stays open
                             actual   1 messages, then the stream ended OK
                """), "\(report)")
    }
}
