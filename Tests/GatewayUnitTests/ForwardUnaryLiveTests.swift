import Contracts
import Foundation
@testable import gateway
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import Testing
import JSON

/// `Upstream.forwardUnary` through a gateway router: unary routes are callback handlers, so a
/// forwarded call needs no task on either side; the upstream's answers, errors and the
/// breaker behave as on the task path.
@Suite("Gateway: unary calls forwarded without a task", .serialized)
struct ForwardUnaryLiveTests {
    static let logger = Logger(label: "forward-unary-tests") { _ in SwiftLogNoOpLogHandler() }
    /// Options with a 10 s timeout from now.
    static var options: CallOptions { CallOptions(timeout: .seconds(10)) }

    /// The fake upstream: echoes, fails, or hangs, recording what it saw.
    static func upstreamServer(log: UpstreamLog) throws -> HTTP2Server {
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
    static func withGateway(
        upstreamPort: Int, adminKey: String? = "right", rateLimit: (perSecond: Double, burst: Int) = (0, 1),
        upstreamConfiguration: ClientConfiguration = .upstream,
        _ body: (TestGateway) async throws -> Void
    ) async throws {
        let group = try EventLoopGroup(count: 1, name: "forward-gateway")
        let upstream = Upstream(
            name: "note-svc", services: [NoteContract.service], required: true,
            client: RPCClient(
                target: SocketAddressText(host: "127.0.0.1", port: upstreamPort), configuration: upstreamConfiguration, group: group))
        var router = Router()
        router.addInterceptor(AdminKeyInterceptor(adminKey: adminKey))
        router.addInterceptor(RateLimitInterceptor(perSecond: rateLimit.perSecond, burst: rateLimit.burst))
        for method in NoteContract.all { router.proxy(method.info, to: upstream, policy: ForwardingPolicy()) }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.handlersStayOnLoop = true
        let server = HTTP2Server(configuration: configuration, router: router, logger: logger, group: group, ownsGroup: true)
        let port = try server.start()
        // The test's client never retries: what the gateway answers each call is what the test sees.
        var noRetries = RetryPolicy()
        noRetries.maxAttempts = 1
        let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port), retry: noRetries)
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
    static func withUpstreamAndGateway(
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
    static func expectError<Value>(
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

    // MARK: Helpers

    /// Runs `body`; its value and how long it took.
    static func timed<Value>(_ body: () async throws -> Value) async rethrows -> (Value, Duration) {
        let start = ContinuousClock.now
        let value = try await body()
        return (value, ContinuousClock.now - start)
    }
}
