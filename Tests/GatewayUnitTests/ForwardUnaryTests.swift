import Contracts
import Foundation
@testable import gateway
import Glibc
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import Synchronization
import Testing

/// The message of the forwarding tests' methods.
private struct Note: RPCMessage, Equatable {
    var text: String
    static let fields = [FieldDescriptor("text", "String")]
}

/// The methods a test gateway routes to its fake upstream.
private enum NoteContract {
    static let service = "test.forward.v1.NoteService"
    /// Idempotent: answers the request as it came.
    static let get = MethodDescriptor<Note, Note>(service: service, method: "Get", kind: .unary, idempotent: true)
    /// Not idempotent: answers the request as it came.
    static let put = MethodDescriptor<Note, Note>(service: service, method: "Put", kind: .unary)
    /// Admin: answers the request as it came.
    static let adminPut = MethodDescriptor<Note, Note>(service: service, method: "AdminPut", kind: .unary, auth: .admin)
    /// Answers the `x-request-id` and `x-note` it was called with.
    static let whoAmI = MethodDescriptor<Note, Note>(service: service, method: "WhoAmI", kind: .unary)
    /// Fails with NOT_FOUND `NOTE_NOT_FOUND` and a detail.
    static let fail = MethodDescriptor<Note, Note>(service: service, method: "Fail", kind: .unary, idempotent: true)
    /// Sleeps 30 s unless cancelled.
    static let hang = MethodDescriptor<Note, Note>(service: service, method: "Hang", kind: .unary)

    static let all = [get, put, adminPut, whoAmI, fail, hang]
}

/// What the fake upstream saw. Thread-safe.
private final class UpstreamLog: Sendable {
    private let state = Mutex<(calls: [String: Int], hangStarted: Int, hangCancelled: Int)>(([:], 0, 0))

    func called(_ method: String) { state.withLock { $0.calls[method, default: 0] += 1 } }
    func calls(_ method: String) -> Int { state.withLock { $0.calls[method, default: 0] } }
    func hangStarted() { state.withLock { $0.hangStarted += 1 } }
    func hangCancelled() { state.withLock { $0.hangCancelled += 1 } }
    var started: Int { state.withLock { $0.hangStarted } }
    var cancelled: Int { state.withLock { $0.hangCancelled } }
}

/// A TCP listener that accepts connections and closes them at once, counting them: an
/// upstream that cannot be reached though its port is open.
private final class SlammingUpstream: Sendable {
    private let fd: Int32
    let port: Int
    private let state = Mutex<(accepted: Int, stopped: Bool, finished: Bool)>((0, false, false))

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketFailure(call: "socket") }
        guard let port = Self.bindAndListen(fd) else {
            Glibc.close(fd)
            throw SocketFailure(call: "bind")
        }
        self.fd = fd
        self.port = port
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Binds `fd` to a free loopback port and listens; the port, or nil on failure.
    private static func bindAndListen(_ fd: Int32) -> Int? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0 && listen(fd, 64) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    var accepted: Int { state.withLock { $0.accepted } }

    private func acceptLoop() {
        while !state.withLock({ $0.stopped }) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 20) > 0 else { continue }
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { continue }
            state.withLock { $0.accepted += 1 }
            Glibc.close(connection)
        }
        state.withLock { $0.finished = true }
    }

    func stop() async {
        state.withLock { $0.stopped = true }
        let deadline = ContinuousClock.now + .seconds(1)
        while !state.withLock({ $0.finished }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        Glibc.close(fd)
    }

    struct SocketFailure: Error {
        let call: String
    }
}

/// A gateway in front of one upstream, as `GatewayServer.build` wires it: the admin-key and
/// rate-limit interceptors, a proxy route per method, the upstream's client on the gateway's loop.
private struct TestGateway {
    let server: HTTP2Server
    let upstream: Upstream
    let router: Router
    /// A client of the gateway.
    let client: RPCClient
}

/// `Upstream.forwardUnary` through a gateway router: unary routes are callback handlers, so a
/// forwarded call needs no task on either side; the upstream's answers, errors and the
/// breaker behave as on the task path.
@Suite("Gateway: unary calls forwarded without a task", .serialized)
struct ForwardUnaryTests {
    static let logger = Logger(label: "forward-unary-tests") { _ in SwiftLogNoOpLogHandler() }
    /// Options with a 10 s timeout from now.
    static var options: CallOptions { CallOptions(timeout: .seconds(10)) }

    /// The fake upstream: echoes, fails, or hangs, recording what it saw.
    private static func upstreamServer(log: UpstreamLog) throws -> HTTP2Server {
        var router = Router()
        for method in [NoteContract.get, NoteContract.put, NoteContract.adminPut] {
            router.unary(method) { request, context in
                log.called(method.info.method)
                return request
            }
        }
        router.unary(NoteContract.whoAmI) { _, context in
            log.called("WhoAmI")
            return Note(text: "\(context.requestID)|\(context.metadata["x-note"] ?? "")|\(context.metadata[MetadataKey.apiKey] ?? "")")
        }
        router.unary(NoteContract.fail) { _, _ in
            log.called("Fail")
            throw RPCError(
                code: .notFound, reason: "NOTE_NOT_FOUND", message: "No note 7 ✓.", details: .object(["id": .number(7)]))
        }
        router.unary(NoteContract.hang) { _, _ in
            log.hangStarted()
            do {
                try await Task.sleep(for: .seconds(30))
            } catch {
                log.hangCancelled()
                throw error
            }
            return Note(text: "slept")
        }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.loopCount = 1
        return try HTTP2Server(configuration: configuration, router: router, logger: logger)
    }

    /// Starts a gateway routing ``NoteContract`` to `upstreamPort`, runs `body`, then closes it.
    private static func withGateway(
        upstreamPort: Int, adminKey: String? = "right", rateLimit: (perSecond: Double, burst: Int) = (0, 1),
        _ body: (TestGateway) async throws -> Void
    ) async throws {
        let group = try EventLoopGroup(count: 1, name: "forward-gateway")
        let upstream = Upstream(
            name: "note-svc", services: [NoteContract.service], required: true,
            client: RPCClient(
                target: SocketAddressText(host: "127.0.0.1", port: upstreamPort), configuration: .upstream, group: group))
        var router = Router()
        router.addInterceptor(AdminKeyInterceptor(adminKey: adminKey))
        router.addInterceptor(RateLimitInterceptor(perSecond: rateLimit.perSecond, burst: rateLimit.burst))
        for method in NoteContract.all { router.proxy(method.info, to: upstream, policy: ForwardingPolicy()) }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.handlersStayOnLoop = true
        let server = HTTP2Server(configuration: configuration, router: router, logger: logger, group: group, ownsGroup: true)
        let port = try server.start()
        // The test's client never retries: what the gateway answers each call is what the test sees.
        var clientConfiguration = ClientConfiguration()
        clientConfiguration.retry.maxAttempts = 1
        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port), configuration: clientConfiguration)
        let gateway = TestGateway(server: server, upstream: upstream, router: router, client: client)
        do {
            try await body(gateway)
        } catch {
            await client.close()
            await upstream.client.close()
            await server.shutdown()
            throw error
        }
        await client.close()
        await upstream.client.close()
        await server.shutdown()
    }

    /// Starts the fake upstream and a gateway in front of it.
    private static func withUpstreamAndGateway(
        adminKey: String? = "right", rateLimit: (perSecond: Double, burst: Int) = (0, 1),
        _ body: (TestGateway, UpstreamLog) async throws -> Void
    ) async throws {
        let log = UpstreamLog()
        let upstreamServer = try upstreamServer(log: log)
        let port = try upstreamServer.start()
        do {
            try await withGateway(upstreamPort: port, adminKey: adminKey, rateLimit: rateLimit) { try await body($0, log) }
        } catch {
            await upstreamServer.shutdown()
            throw error
        }
        await upstreamServer.shutdown()
    }

    /// Runs `body`, returning the ``RPCError`` it threw; records an issue when it succeeded or
    /// threw another code or reason.
    @discardableResult
    private static func expectError<Value>(
        _ code: RPCCode, reason: String?, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Value
    ) async -> RPCError? {
        do {
            let value = try await body()
            Issue.record("expected \(code.name), got \(value)", sourceLocation: sourceLocation)
            return nil
        } catch let error as RPCError {
            #expect(error.code == code && error.reason == reason, "got \(error)", sourceLocation: sourceLocation)
            return error
        } catch {
            Issue.record("expected RPCError \(code.name), got \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    // MARK: Wiring

    @Test("unary routes are callback handlers and the gateway's interceptors are immediate, so forwarding needs no task")
    func routesAreTaskless() async throws {
        try await Self.withGateway(upstreamPort: 1, rateLimit: (10, 10)) { gateway in
            for method in NoteContract.all {
                let route = try #require(gateway.router.method(forPath: method.path))
                #expect(route.callbackHandler != nil, "\(method.path)")
                #expect(gateway.router.canPrepareImmediately(method.info), "\(method.path)")
            }
        }
        // The key checks services run themselves never suspend either.
        let interceptors: [any ServerInterceptor] = [
            AdminKeyInterceptor(adminKey: "right"), AdminKeyInterceptor(adminKey: nil), RateLimitInterceptor(perSecond: 1, burst: 1),
            APIKeyInterceptor(adminKey: "admin", internalKey: "internal"),
        ]
        #expect(interceptors.allSatisfy { $0 is any ImmediateServerInterceptor })
        var router = Router()
        router.addInterceptor(APIKeyInterceptor(adminKey: "admin", internalKey: "internal"))
        for method in [CatalogContract.upsertProduct.info, CatalogContract.reserveStock.info, CatalogContract.getProduct.info] {
            #expect(router.canPrepareImmediately(method), "\(method.path)")
        }
    }

    // MARK: Answers

    @Test("the upstream's answer comes back unchanged, with the caller's metadata and request id forwarded")
    func answerPassesThrough() async throws {
        try await Self.withUpstreamAndGateway { gateway, log in
            let note = Note(text: "héllo ✓ \"quoted\"")
            #expect(try await gateway.client.unary(NoteContract.get, note, options: Self.options) == note)
            #expect(try await gateway.client.unary(NoteContract.put, note, options: Self.options) == note)
            let who = try await gateway.client.unary(
                NoteContract.whoAmI, Note(text: ""),
                options: CallOptions(metadata: [MetadataKey.requestID: "fw-req-1", "x-note": "noted"], timeout: .seconds(10)))
            #expect(who.text == "fw-req-1|noted|")
            #expect(log.calls("Get") == 1 && log.calls("Put") == 1 && log.calls("WhoAmI") == 1)
            #expect(!gateway.upstream.breaker.isOpen)
        }
    }

    @Test("an upstream error passes through with its code, reason, message and details, and leaves the breaker closed")
    func upstreamErrorPassesThrough() async throws {
        try await Self.withUpstreamAndGateway { gateway, log in
            for _ in 0..<5 {
                let error = await Self.expectError(.notFound, reason: "NOTE_NOT_FOUND") {
                    try await gateway.client.unary(NoteContract.fail, Note(text: "7"), options: Self.options)
                }
                #expect(error?.message == "No note 7 ✓.")
                #expect(error?.details?["id"] == .number(7))
            }
            // An idempotent method answered with an error is not retried: the upstream answered.
            #expect(log.calls("Fail") == 5)
            #expect(!gateway.upstream.breaker.isOpen)
            let still = try await gateway.client.unary(NoteContract.get, Note(text: "still"), options: Self.options)
            #expect(still.text == "still")
        }
    }

    @Test("100 concurrent forwarded calls each get their own answer")
    func concurrentCalls() async throws {
        try await Self.withUpstreamAndGateway { gateway, log in
            let answers = try await withThrowingTaskGroup(of: (Int, Note).self) { group in
                for index in 0..<100 {
                    group.addTask {
                        let method = index % 2 == 0 ? NoteContract.get : NoteContract.put
                        return (index, try await gateway.client.unary(method, Note(text: "note \(index)"), options: Self.options))
                    }
                }
                var answers: [Int: Note] = [:]
                for try await (index, note) in group { answers[index] = note }
                return answers
            }
            #expect(answers.count == 100)
            #expect(answers.allSatisfy { $0.value.text == "note \($0.key)" })
            #expect(log.calls("Get") + log.calls("Put") == 100)
        }
    }

    // MARK: An unreachable upstream

    @Test("an upstream nobody listens on: UNAVAILABLE UPSTREAM_UNAVAILABLE naming it, and the breaker opens")
    func deadUpstream() async throws {
        let probe = try Self.upstreamServer(log: UpstreamLog())
        let port = try probe.start()
        await probe.shutdown()  // the port is free again: connections are refused
        try await Self.withGateway(upstreamPort: port) { gateway in
            // An idempotent call is retried, each failed attempt counting: one call opens the breaker.
            let error = await Self.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                try await gateway.client.unary(NoteContract.get, Note(text: "x"), options: Self.options)
            }
            #expect(error?.message.contains("note-svc") == true)
            #expect(gateway.upstream.breaker.isOpen)
            let again = await Self.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                try await gateway.client.unary(NoteContract.put, Note(text: "x"), options: Self.options)
            }
            #expect(again?.message.contains("note-svc") == true)
        }
    }

    @Test("an upstream that drops every connection opens the breaker within one call, and the next call never reaches it")
    func breakerAnswersFast() async throws {
        let slamming = try SlammingUpstream()
        do {
            try await Self.withGateway(upstreamPort: slamming.port) { gateway in
                await Self.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                    try await gateway.client.unary(NoteContract.get, Note(text: "x"), options: Self.options)
                }
                #expect(gateway.upstream.breaker.isOpen)
                let attempts = slamming.accepted
                // The default breaker opens at 3 failures in a row: the retries stop there.
                #expect(attempts == 3, "the upstream saw \(attempts) connections")
                for method in [NoteContract.get, NoteContract.put] {
                    let (_, elapsed) = await Self.timed {
                        await Self.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                            try await gateway.client.unary(method, Note(text: "x"), options: Self.options)
                        }
                    }
                    #expect(elapsed < .seconds(1), "the open breaker took \(elapsed) to answer")
                }
                try await Task.sleep(for: .milliseconds(100))  // room for a connection, which must not come
                #expect(slamming.accepted == attempts, "calls went through the open breaker")
            }
        } catch {
            await slamming.stop()
            throw error
        }
        await slamming.stop()
    }

    @Test("a non-idempotent call is not retried: each counts once against the breaker, which opens at the third")
    func nonIdempotentCountsOnce() async throws {
        let slamming = try SlammingUpstream()
        do {
            try await Self.withGateway(upstreamPort: slamming.port) { gateway in
                for call in 1...3 {
                    #expect(!gateway.upstream.breaker.isOpen, "open before call \(call)")
                    await Self.expectError(.unavailable, reason: "UPSTREAM_UNAVAILABLE") {
                        try await gateway.client.unary(NoteContract.put, Note(text: "x"), options: Self.options)
                    }
                    #expect(slamming.accepted == call)
                }
                #expect(gateway.upstream.breaker.isOpen)
            }
        } catch {
            await slamming.stop()
            throw error
        }
        await slamming.stop()
    }

    // MARK: Cancellation

    @Test("a client cancelling a forwarded call cancels the upstream call, and the breaker stays closed")
    func cancellationReachesUpstream() async throws {
        try await Self.withUpstreamAndGateway { gateway, log in
            let client = gateway.client
            let call = Task { try await client.unary(NoteContract.hang, Note(text: "x"), options: Self.options) }
            let started = await Self.poll { log.started == 1 }
            try #require(started, "the upstream handler never started")
            call.cancel()
            if case .success(let note) = await call.result { Issue.record("the cancelled call succeeded with \(note)") }
            let cancelled = await Self.poll { log.cancelled == 1 }
            #expect(cancelled, "the upstream handler never saw the cancellation")
            #expect(!gateway.upstream.breaker.isOpen)
            let after = try await client.unary(NoteContract.get, Note(text: "after"), options: Self.options)
            #expect(after.text == "after")
        }
    }

    @Test("a client's short deadline travels upstream: the client gets DEADLINE_EXCEEDED and the upstream call is cancelled")
    func deadlineReachesUpstream() async throws {
        try await Self.withUpstreamAndGateway { gateway, log in
            let (_, elapsed) = await Self.timed {
                await Self.expectError(.deadlineExceeded, reason: nil) {
                    try await gateway.client.unary(NoteContract.hang, Note(text: "x"), options: CallOptions(timeout: .milliseconds(300)))
                }
            }
            #expect(elapsed < .seconds(3), "a 300 ms deadline took \(elapsed)")
            let cancelled = await Self.poll { log.cancelled == 1 }
            #expect(cancelled, "the upstream handler never saw the deadline")
            #expect(!gateway.upstream.breaker.isOpen)
        }
    }

    // MARK: Interceptors on unary routes

    @Test("the rate limit applies to forwarded unary calls before any reaches the upstream")
    func rateLimit() async throws {
        try await Self.withUpstreamAndGateway(rateLimit: (0.001, 2)) { gateway, log in
            for index in 0..<2 {
                let answer = try await gateway.client.unary(NoteContract.get, Note(text: "\(index)"), options: Self.options)
                #expect(answer.text == "\(index)")
            }
            for method in [NoteContract.get, NoteContract.put] {
                await Self.expectError(.resourceExhausted, reason: "RATE_LIMITED") {
                    try await gateway.client.unary(method, Note(text: "over"), options: Self.options)
                }
            }
            #expect(log.calls("Get") == 2)
            #expect(log.calls("Put") == 0)
        }
    }

    @Test("the admin key applies to forwarded unary admin calls: missing and wrong keys never reach the upstream")
    func adminKey() async throws {
        try await Self.withUpstreamAndGateway(adminKey: "right") { gateway, log in
            let client = gateway.client
            await Self.expectError(.unauthenticated, reason: "MISSING_API_KEY") {
                try await client.unary(NoteContract.adminPut, Note(text: "x"), options: Self.options)
            }
            await Self.expectError(.permissionDenied, reason: "INVALID_API_KEY") {
                try await client.unary(
                    NoteContract.adminPut, Note(text: "x"), options: CallOptions(metadata: [MetadataKey.apiKey: "wrong"], timeout: .seconds(10)))
            }
            #expect(log.calls("AdminPut") == 0)
            let admitted = try await client.unary(
                NoteContract.adminPut, Note(text: "in"), options: CallOptions(metadata: [MetadataKey.apiKey: "right"], timeout: .seconds(10)))
            #expect(admitted.text == "in")
            #expect(log.calls("AdminPut") == 1)
            // Methods that are not admin need no key.
            let open = try await client.unary(NoteContract.put, Note(text: "open"), options: Self.options)
            #expect(open.text == "open")
        }
    }

    // MARK: Helpers

    private static func poll(within timeout: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    private static func timed<Value>(_ body: () async throws -> Value) async rethrows -> (Value, Duration) {
        let start = ContinuousClock.now
        let value = try await body()
        return (value, ContinuousClock.now - start)
    }
}
