package import Foundation
internal import Contracts
package import RPC
import RPCHTTP2
internal import Synchronization
package import Testing
import JSON

/// A provider played from a contract, for a consumer test: an in-process ``HTTP2Server`` on
/// a free loopback port that answers each call with the response of the interaction whose
/// request it matches, and records every call no served interaction describes.
///
/// In ``ContractMode/verify`` (the default) requests are checked against the committed
/// contract's example requests under their matchers, and the test's declarations against
/// the file; in ``ContractMode/record`` the first matching call of each interaction becomes
/// its example request, and ``finish(sourceLocation:)`` writes them into the file.
///
/// A consumer speaking Connect over HTTP/1.1 (``ContractWire/connect``) reaches the mock
/// through a web edge the test gives — the gateway's own Connect translation — which turns
/// each request into a call of the same router; the contract then says the consumer speaks Connect.
///
/// Thread-safe: the calls' bookkeeping lives behind a `Mutex`.
package final class MockProvider: Sendable {
    /// The consumer under test.
    package let consumer: String
    /// The provider this mock plays.
    package let provider: String
    /// Whether the contract is checked or written.
    package let mode: ContractMode
    /// Where the mock listens, for the consumer's client.
    package let address: SocketAddressText
    private let server: HTTP2Server
    private let book: CallBook
    private let directory: URL

    /// Starts a mock of `provider` for `consumer` serving `specs` from the contract in `directory`.
    /// With `connectEdge` the consumer speaks Connect: the edge it makes for the mock's router
    /// serves the HTTP/1.1 requests (gRPC still reaches the router directly).
    package static func start(
        consumer: String, provider: String, serving specs: [InteractionSpec], mode: ContractMode = .current,
        directory: URL = ContractFiles.directory, connectEdge: (@Sendable (Router) -> any WebHandler)? = nil
    ) async throws -> MockProvider {
        let wire: ContractWire = connectEdge == nil ? .grpc : .connect
        let book = CallBook(consumer: consumer, provider: provider, mode: mode, wire: wire)
        let file = ContractFiles.url(consumer: consumer, provider: provider, in: directory)
        let contract = mode == .verify ? try ContractFiles.load(consumer: consumer, provider: provider, in: directory) : nil
        if let contract, contract.wire != wire {
            book.report(
                "\(file.lastPathComponent) of \(consumer) says its calls travel over \(contract.wire.rawValue), the test's over "
                    + "\(wire.rawValue). Re-record it: CONTRACT_RECORD=1 swift test --filter <this suite>")
        }
        for spec in specs {
            var recorded: Interaction?
            if mode == .verify {
                recorded = contract?.interaction(spec.description)
                if let recorded {
                    for difference in spec.differences(from: recorded) {
                        book.report(
                            "\(file.lastPathComponent) of \(consumer) is out of date for \"\(spec.description)\": \(difference). "
                                + "Re-record it: CONTRACT_RECORD=1 swift test --filter <this suite>")
                    }
                } else {
                    book.report(
                        "\(file.path) has no interaction \"\(spec.description)\". "
                            + "Record it: CONTRACT_RECORD=1 swift test --filter <this suite>")
                }
            }
            book.add(spec, recorded: recorded)
        }
        return try start(book: book, specs: specs, directory: directory, connectEdge: connectEdge)
    }

    /// Starts a mock of `contract`'s provider that answers the interactions named in
    /// `descriptions` (all when nil) as recorded — for a provider test, to stand in for the
    /// provider's own upstreams with what its own contracts say they answer.
    package static func start(playing contract: Contract, only descriptions: [String]? = nil) throws -> MockProvider {
        let book = CallBook(consumer: contract.consumer, provider: contract.provider, mode: .verify, wire: contract.wire)
        var specs: [InteractionSpec] = []
        for interaction in contract.interactions where descriptions?.contains(interaction.description) ?? true {
            let spec = InteractionSpec(interaction)
            specs.append(spec)
            book.add(spec, recorded: interaction)
        }
        let missing = Set(descriptions ?? []).subtracting(specs.map(\.description))
        guard missing.isEmpty else {
            throw ContractError(
                "the contract of \(contract.consumer) with \(contract.provider) has no interaction \(missing.sorted())")
        }
        return try start(book: book, specs: specs, directory: ContractFiles.directory)
    }

    private static func start(
        book: CallBook, specs: [InteractionSpec], directory: URL, connectEdge: (@Sendable (Router) -> any WebHandler)? = nil
    ) throws -> MockProvider {
        var router = Router()
        var paths = Set<String>()
        for info in APIDescription.allMethods where paths.insert(info.path).inserted {
            router.register(info) { io, context in try await book.serve(io: io, context: context) }
        }
        for spec in specs where paths.insert(spec.path).inserted {
            let parts = spec.path.split(separator: "/")
            let info = MethodInfo(
                service: String(parts.first ?? ""), method: String(parts.last ?? ""), kind: .unary, auth: .none,
                idempotent: false, requestFields: [], responseFields: [])
            router.register(info) { io, context in try await book.serve(io: io, context: context) }
        }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.loopCount = 1
        configuration.gracePeriod = .seconds(2)
        let server = try HTTP2Server(
            configuration: configuration, router: router, logger: ContractLogging.quiet, web: connectEdge?(router))
        let port = try server.start()
        return MockProvider(
            consumer: book.consumer, provider: book.provider, mode: book.mode,
            address: SocketAddressText(host: "127.0.0.1", port: port), server: server, book: book, directory: directory)
    }

    private init(
        consumer: String, provider: String, mode: ContractMode, address: SocketAddressText, server: HTTP2Server,
        book: CallBook, directory: URL
    ) {
        self.consumer = consumer
        self.provider = provider
        self.mode = mode
        self.address = address
        self.server = server
        self.book = book
        self.directory = directory
    }

    /// What went wrong so far: calls no served interaction describes, and contract files out of date.
    package var problems: [String] { book.problems }

    /// How many calls matched the interaction `description`.
    package func callCount(_ description: String) -> Int { book.callCount(description) }

    /// Stops the server; adds a problem for each served interaction the consumer never called
    /// (unless `requireEveryInteraction` is false); in record mode writes the called ones into
    /// the contract file. Returns every problem.
    @discardableResult
    package func stop(requireEveryInteraction: Bool = true) async -> [String] {
        await server.shutdown()
        let (uncalled, recorded) = book.close()
        for description in uncalled where requireEveryInteraction {
            book.report("\(consumer) never made the call \"\(description)\" that the test serves")
        }
        if mode == .record, !recorded.isEmpty {
            do {
                try await ContractRecorder.shared.record(
                    recorded, consumer: consumer, provider: provider, wire: book.wire, in: directory)
            } catch {
                book.report("cannot write the contract: \(error)")
            }
        }
        return book.problems
    }

    /// ``stop(requireEveryInteraction:)``, recording each problem as an issue of the running test.
    package func finish(requireEveryInteraction: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) async {
        for problem in await stop(requireEveryInteraction: requireEveryInteraction) {
            Issue.record("contract \(consumer) → \(provider): \(problem)", sourceLocation: sourceLocation)
        }
    }
}

/// The mock's bookkeeping: the interactions it serves, how often each matched, the example
/// requests, and the problems seen. Thread-safe: a `Mutex`.
private final class CallBook: Sendable {
    /// One served interaction: the test's declaration, its example request (from the file,
    /// or the first call while recording) and how many calls matched it.
    struct Entry {
        var spec: InteractionSpec
        var recorded: Interaction?
        var calls = 0
    }

    /// Everything the book holds; guarded by `state`.
    struct State {
        var entries: [Entry] = []
        var problems: [String] = []
    }

    /// What the mock does with a call.
    enum Decision {
        case respond(ResponseExpectation)
        case reject(String)
    }

    /// The consumer under test.
    let consumer: String
    /// The provider the mock plays.
    let provider: String
    /// Whether example requests come from the file or are being recorded.
    let mode: ContractMode
    /// How the consumer's calls arrive, as a recorded contract says.
    let wire: ContractWire
    private let state = Mutex(State())

    /// An empty book.
    init(consumer: String, provider: String, mode: ContractMode, wire: ContractWire) {
        self.consumer = consumer
        self.provider = provider
        self.mode = mode
        self.wire = wire
    }

    /// The problems so far, in order.
    var problems: [String] { state.withLock { $0.problems } }

    /// Adds a problem.
    func report(_ problem: String) { state.withLock { $0.problems.append(problem) } }

    /// Serves `spec`, with `recorded` as its example request when there is one.
    func add(_ spec: InteractionSpec, recorded: Interaction?) {
        state.withLock { $0.entries.append(Entry(spec: spec, recorded: recorded)) }
    }

    /// How many calls matched the interaction `description`.
    func callCount(_ description: String) -> Int {
        state.withLock { state in state.entries.filter { $0.spec.description == description }.reduce(0) { $0 + $1.calls } }
    }

    /// The descriptions never called, and (record mode) the interactions to write.
    func close() -> (uncalled: [String], recorded: [Interaction]) {
        state.withLock { state in
            (
                state.entries.filter { $0.calls == 0 }.map(\.spec.description),
                mode == .record ? state.entries.compactMap(\.recorded) : []
            )
        }
    }

    /// Serves one call: reads the request (every message, for a client stream), decides,
    /// answers — one message, a status, or a stream of messages and its end.
    func serve(io: any ServerCallIO, context: ServerContext) async throws {
        var messages: [JSONValue] = []
        while let data = try await io.nextMessage() {
            do {
                messages.append(try JSONCodec.shared.decode(JSONValue.self, from: data))
            } catch {
                report("\(consumer) sent a message to \(context.method.path) that is not JSON: \(error)")
                throw RPCError(code: .invalidArgument, reason: "MALFORMED_MESSAGE", message: "Not JSON.")
            }
        }
        switch decide(path: context.method.path, metadata: context.metadata, messages: messages) {
        case .respond(.message(let message, _)):
            try await io.write(try JSONCodec.shared.encode(message))
        case .respond(.status(let code, let reason)):
            throw RPCError(code: code, reason: reason, message: "As the contract with \(consumer) says.")
        case .respond(.stream(let stream)):
            for streamed in stream.messages { try await io.write(try JSONCodec.shared.encode(streamed.message)) }
            switch stream.end {
            case .ok:
                return
            case .failure(let code, let reason):
                throw RPCError(code: code, reason: reason, message: "As the contract with \(consumer) says.")
            case .open:
                await Self.untilCancelled()
            }
        case .reject(let problem):
            throw RPCError(code: .unimplemented, reason: "NOT_IN_CONTRACT", message: problem)
        }
    }

    /// Returns once the calling task is cancelled: a watch stays open until the consumer
    /// cancels the call (RST_STREAM cancels the handler's task) or the mock shuts down.
    private static func untilCancelled() async {
        let (cancelled, continuation) = AsyncStream<Never>.makeStream()
        await withTaskCancellationHandler {
            for await _ in cancelled {}
        } onCancel: {
            continuation.finish()
        }
    }

    /// The interaction a call matches, or why none does (also recorded as a problem).
    private func decide(path: String, metadata: Metadata, messages: [JSONValue]) -> Decision {
        state.withLock { state in
            let candidates = state.entries.indices.filter { state.entries[$0].spec.path == path }
            guard !candidates.isEmpty else {
                let problem = "\(consumer) called \(path), which no interaction served by the test describes"
                state.problems.append(problem)
                return .reject(problem)
            }
            var reasons: [String] = []
            for index in candidates {
                let entry = state.entries[index]
                let mismatches: [Mismatch]
                do {
                    mismatches = try Self.mismatches(metadata: metadata, messages: messages, entry: entry)
                } catch {
                    reasons.append("\"\(entry.spec.description)\": \(error)")
                    continue
                }
                if mismatches.isEmpty {
                    state.entries[index].calls += 1
                    if mode == .record, entry.recorded == nil {
                        state.entries[index].recorded = entry.spec.interaction(metadata: metadata, messages: messages)
                    }
                    return .respond(entry.spec.response)
                }
                reasons.append(
                    "\"\(entry.spec.description)\":\n" + mismatches.map { "      \($0)" }.joined(separator: "\n"))
            }
            let sent = messages.count == 1 ? JSONText.compact(messages[0]) : JSONText.compact(.array(messages))
            let problem =
                "\(consumer) sent a request the contract does not describe: \(path) \(sent)\n"
                + "  against each interaction on that path:\n    " + reasons.joined(separator: "\n    ")
            state.problems.append(problem)
            return .reject(problem)
        }
    }

    /// How a call differs from an entry: from its example request when there is one, else
    /// (the first call while recording) only in the metadata the spec names and, for a call
    /// with one request message, in their number.
    private static func mismatches(
        metadata: Metadata, messages: [JSONValue], entry: Entry
    ) throws(ContractError) -> [Mismatch] {
        guard var expectation = entry.recorded?.request else {
            var probe = entry.spec.interaction(metadata: metadata, messages: messages).request
            // Equality can only be checked against a recorded example; presence still counts.
            probe.matchingRules.metadata = probe.matchingRules.metadata.mapValues { $0.match == .equality ? .type : $0 }
            var found = CallMatching.metadataMismatches(of: metadata, against: probe)
            if !entry.spec.streamsRequests && messages.count != 1 {
                found.append(Mismatch(path: "request", expected: "one message", actual: "\(messages.count) messages"))
            }
            return found
        }
        expectation.matchingRules = RequestMatchingRules(metadata: entry.spec.metadata, message: entry.spec.messageRules)
        return try CallMatching.mismatches(of: metadata, messages: messages, against: expectation)
    }
}
