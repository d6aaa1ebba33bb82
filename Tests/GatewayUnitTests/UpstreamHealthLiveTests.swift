import Contracts
import Foundation
@testable import gateway
import Logging
import RPC
@testable import RPCHTTP2
import ServiceKit
import SystemCalls
import ServiceTestSupport
import Synchronization
import Testing

/// ``UpstreamHealth`` against an in-process upstream whose stream slots a burst of calls holds.
@Suite("Upstream health checks", .serialized)
struct UpstreamHealthLiveTests {
    /// The upstream's stream limit per connection: small, so a few held calls fill it.
    static let streamLimit = 4
    static let hold = ProxyFixture.method("test.v1.Held", "Hold", kind: .unary)

    /// Calls the upstream is holding, and whether to let them go.
    final class Holds: Sendable {
        let started = Atomic<Int>(0)
        let released = Atomic<Bool>(false)
    }

    /// A server that answers Health/Check at once and holds every Hold call until released.
    static func busyServer(_ holds: Holds) throws -> HTTP2Server {
        var router = Router()
        router.unary(HealthContract.check) { _, _ in HealthCheckResponse(status: .serving) }
        router.register(hold) { io, _ in
            _ = try await Router.singleRawRequest(from: io)
            holds.started.add(1, ordering: .relaxed)
            while !holds.released.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
            try await io.write(Data("{}".utf8))
        }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.limits.maxConcurrentStreams = UInt32(streamLimit)
        return try HTTP2Server(configuration: configuration, router: router, logger: ProxyFixture.logger)
    }

    /// Fills every stream slot of `upstream`'s call connections (and queues as many calls again
    /// behind them), runs `body`, then lets the calls finish and checks they all answered.
    static func whileSlotsAreHeld(
        _ upstream: Upstream, holds: Holds, connections: Int, _ body: () async throws -> Void
    ) async throws {
        // Each connection up and the server's limit known first (calls made before its SETTINGS
        // arrive would be refused, not queued); calls made off the loops take the connections in turn.
        for _ in 0..<connections {
            _ = try await upstream.client.unary(HealthContract.check, HealthCheckRequest(), options: CallOptions(timeout: .seconds(5)))
        }
        let calls = 2 * streamLimit * connections
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<calls {
                group.addTask {
                    let call = try upstream.client.makeCall(path: hold.path, options: CallOptions(timeout: .seconds(30)))
                    try await call.send(Data("{}".utf8))
                    call.finishSending()
                    _ = try await call.nextMessage()
                }
            }
            let filled = await eventually { holds.started.load(ordering: .relaxed) == streamLimit * connections }
            #expect(filled, "the held calls never filled the upstream's stream slots")
            do {
                try await body()
            } catch {
                holds.released.store(true, ordering: .relaxed)
                throw error
            }
            holds.released.store(true, ordering: .relaxed)
            try await group.waitForAll()
        }
        #expect(holds.started.load(ordering: .relaxed) == calls)
    }

    /// An upstream that has stopped answering: its health checks and Hold calls (counted in
    /// `hung.started`) wait until `hung` is released; reached on a loop of its own.
    static func hungUpstream(_ hung: Holds) throws -> (HTTP2Server, EventLoopGroup, Upstream) {
        var router = Router()
        router.unary(HealthContract.check) { _, _ in
            while !hung.released.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
            return HealthCheckResponse(status: .serving)
        }
        router.register(hold) { io, _ in
            _ = try await Router.singleRawRequest(from: io)
            hung.started.add(1, ordering: .relaxed)
            while !hung.released.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
            try await io.write(Data("{}".utf8))
        }
        let server = try HTTP2Server(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: router, logger: ProxyFixture.logger)
        let group = try EventLoopGroup(count: 1, name: "health-test")
        let upstream = Upstream.connecting(
            name: "catalog-svc", target: UpstreamTarget(host: "127.0.0.1", port: try server.start()),
            services: [CatalogContract.service], required: true, configuration: .upstream, group: group, logger: ProxyFixture.logger)
        return (server, group, upstream)
    }

    static func checker(_ upstream: Upstream) -> UpstreamHealth {
        UpstreamHealth(upstreams: [upstream], health: HealthMonitor(), timeout: .milliseconds(500), logger: ProxyFixture.logger)
    }

    @Test("an upstream whose stream slots a burst of calls holds is still SERVING: the check has a connection of its own")
    func busyUpstreamStaysServing() async throws {
        let holds = Holds()
        let server = try Self.busyServer(holds)
        let port = try server.start()
        let group = try EventLoopGroup(count: 2, name: "health-test")
        let upstream = Upstream.connecting(
            name: "catalog-svc", target: UpstreamTarget(host: "127.0.0.1", port: port),
            services: [CatalogContract.service], required: true, configuration: .upstream, group: group, logger: ProxyFixture.logger)
        var failure: (any Error)?
        do {
            try await Self.whileSlotsAreHeld(upstream, holds: holds, connections: 2) {
                let statuses = await Self.checker(upstream).checkAll()
                #expect(statuses["catalog-svc"] == .serving)
                #expect(!upstream.breaker.isOpen)
            }
        } catch {
            failure = error
        }
        await upstream.close()
        await group.shutdown()
        await server.shutdown()
        if let failure { throw failure }
    }

    @Test("after an outage the health connection reconnects at the next check, not after the calls' backoff")
    func healthConnectionRetriesEachCheck() async throws {
        let holds = Holds()
        let probe = try Self.busyServer(holds)
        let port = try probe.start()
        await probe.shutdown()  // the port is free: connections are refused
        let group = try EventLoopGroup(count: 1, name: "health-test")
        // Calls' connections wait 3 s after a failed attempt (±20 %): longer than a check interval.
        var configuration = ClientConfiguration.upstream
        configuration.reconnectInitialBackoff = .seconds(3)
        let upstream = Upstream.connecting(
            name: "catalog-svc", target: UpstreamTarget(host: "127.0.0.1", port: port),
            services: [CatalogContract.service], required: true, configuration: configuration, group: group, logger: ProxyFixture.logger)
        let checker = Self.checker(upstream)
        let down = await checker.checkAll()["catalog-svc"]
        var serverConfiguration = ServerConfiguration(host: "127.0.0.1", port: port)
        serverConfiguration.limits.maxConcurrentStreams = UInt32(Self.streamLimit)
        var router = Router()
        router.unary(HealthContract.check) { _, _ in HealthCheckResponse(status: .serving) }
        let server = try HTTP2Server(configuration: serverConfiguration, router: router, logger: ProxyFixture.logger)
        _ = try server.start()
        try await Task.sleep(for: .milliseconds(700))  // less than a second: the next check
        let back = await checker.checkAll()["catalog-svc"]
        await upstream.close()
        await group.shutdown()
        await server.shutdown()
        #expect(down == .notServing)
        #expect(back == .serving, "the first check after the upstream came back did not reach it")
    }

    @Test("an upstream that stops answering (two checks in a row time out) opens the breaker: calls are refused at once")
    func hungUpstreamOpensTheBreaker() async throws {
        let hung = Holds()
        let (server, group, upstream) = try Self.hungUpstream(hung)
        let checker = Self.checker(upstream)
        // One unanswered check may be its connection's fault: it is replaced, the breaker stays closed.
        let first = await checker.checkAll()["catalog-svc"]
        let openAfterOne = upstream.breaker.isOpen
        let replaced = await eventually(within: .seconds(5)) { server.openConnectionCount == 0 }
        // A second in a row: the upstream itself is not answering.
        let second = await checker.checkAll()["catalog-svc"]
        let openAfterTwo = upstream.breaker.isOpen
        // Past the breaker's 1 s cool-down it still refuses: no call probes before the next check.
        try await Task.sleep(for: .milliseconds(1200))
        let admission = upstream.breaker.admit()
        hung.released.store(true, ordering: .relaxed)
        await upstream.close()
        await group.shutdown()
        await server.shutdown()
        #expect(first == .notServing && second == .notServing)
        #expect(!openAfterOne, "one unanswered check opened the breaker")
        #expect(replaced, "the unanswered check's connection was kept")
        #expect(openAfterTwo, "two unanswered checks left the breaker closed: calls would wait out their deadlines")
        #expect(admission == .reject, "a call probed the hung upstream before the next check")
    }

    /// Starts a Hold call through `upstream` that nobody answers for 30 s; its error, or nil
    /// when it was answered.
    static func callInFlight(on upstream: Upstream) -> Task<RPCError?, Never> {
        Task {
            do {
                _ = try await upstream.forward(hold, options: CallOptions(timeout: .seconds(30))) { call in
                    try await call.send(Data("{}".utf8))
                    call.finishSending()
                    return try await call.nextMessage()
                }
                return nil
            } catch {
                return error as? RPCError
            }
        }
    }

    @Test("calls already waiting on an upstream that stops answering fail UPSTREAM_UNAVAILABLE when its breaker opens, not at their deadlines")
    func hungUpstreamFailsCallsInFlight() async throws {
        // A stopped process: the kernel completes connections in the listen backlog, nothing
        // ever answers — not the calls, the health checks, nor a PING.
        let (listener, port) = try Socket.listen(on: SocketAddressText(host: "127.0.0.1", port: 0))
        defer { System.close(listener) }
        let group = try EventLoopGroup(count: 1, name: "health-test")
        let upstream = Upstream.connecting(
            name: "catalog-svc", target: UpstreamTarget(host: "127.0.0.1", port: port),
            services: [CatalogContract.service], required: true, configuration: .upstream, group: group, logger: ProxyFixture.logger)
        let call = Self.callInFlight(on: upstream)
        let checker = Self.checker(upstream)
        await checker.checkAll()  // unanswered: only the health connection is replaced
        await checker.checkAll()  // the second in a row: the calls' connection must answer a PING
        let failure = await call.value  // without the sweep, only at its 30 s deadline
        await upstream.close()
        await group.shutdown()
        #expect(failure?.code == .unavailable, "the call in flight ended with \(String(describing: failure))")
        #expect(failure?.reason == GatewayReason.upstreamUnavailable.rawValue)
    }

    @Test("calls waiting on an upstream whose checks go unanswered but whose connection answers a PING are kept")
    func slowChecksKeepCallsInFlight() async throws {
        let hung = Holds()  // the health checks and the Hold call wait; the server's loop answers
        let (server, group, upstream) = try Self.hungUpstream(hung)
        let call = Self.callInFlight(on: upstream)
        let waiting = await eventually { hung.started.load(ordering: .relaxed) == 1 }
        let checker = Self.checker(upstream)
        await checker.checkAll()
        await checker.checkAll()
        let open = upstream.breaker.isOpen
        try await Task.sleep(for: .milliseconds(800))  // past the PING's 500 ms
        hung.released.store(true, ordering: .relaxed)
        let failure = await call.value
        await upstream.close()
        await group.shutdown()
        await server.shutdown()
        #expect(waiting)
        #expect(open, "two unanswered checks left the breaker closed")
        #expect(failure == nil, "the call in flight ended with \(String(describing: failure))")
    }

    @Test("a check sharing the calls' connection times out behind the burst (what the separate connection avoids)")
    func sharedConnectionWaitsBehindTheBurst() async throws {
        let holds = Holds()
        let server = try Self.busyServer(holds)
        let upstream = try UpstreamLiveTests.upstream(port: try server.start())  // one client for calls and checks
        var failure: (any Error)?
        do {
            try await Self.whileSlotsAreHeld(upstream, holds: holds, connections: 1) {
                let statuses = await Self.checker(upstream).checkAll()
                #expect(statuses["catalog-svc"] == .notServing)
            }
        } catch {
            failure = error
        }
        await upstream.close()
        await server.shutdown()
        if let failure { throw failure }
    }
}
