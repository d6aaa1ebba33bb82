import Contracts
import Foundation
import JSON
import Logging
import RPC
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Synchronization
import Testing

/// A message naming the replica that answered.
private struct Served: RPCMessage, Equatable {
    var port: Int
    static let fields = [FieldDescriptor("port", "Int")]
}

/// A read any replica may serve again (idempotent), and a write that must not run twice.
private enum Replicated {
    static let read = MethodDescriptor<Served, Served>(service: "test.replicated.v1.Replicated", method: "Read", kind: .unary, idempotent: true)
    static let write = MethodDescriptor<Served, Served>(service: "test.replicated.v1.Replicated", method: "Write", kind: .unary)
}

/// How many writes a replica served.
private final class WriteCount: Sendable {
    let value = Atomic<Int>(0)
}

/// One replica on loopback: an HTTP/2 server with the standard health service and the two
/// methods, counting the writes it served; it can be stopped and started again on its port.
private final class LiveReplica: Sendable {
    let port: Int
    let writes = WriteCount()
    private let server: Mutex<HTTP2Server?>

    init() throws {
        let (server, port) = try Self.serve(on: 0, writes: writes)
        self.port = port
        self.server = Mutex(server)
    }

    var address: SocketAddressText { SocketAddressText(host: "127.0.0.1", port: port) }

    /// Stops serving (graceful: a GOAWAY, then the listener closes).
    func stop() async {
        let running = server.withLock { server in
            defer { server = nil }
            return server
        }
        await running?.shutdown()
    }

    /// Serves again on the same port.
    func start() throws {
        let (server, _) = try Self.serve(on: port, writes: writes)
        self.server.withLock { $0 = server }
    }

    private static func serve(on port: Int, writes: WriteCount) throws -> (HTTP2Server, Int) {
        var router = Router()
        router.addStandardServices(health: HealthMonitor())
        let answered = Mutex(port)
        router.unary(Replicated.read) { _, _ in Served(port: answered.withLock { $0 }) }
        router.unary(Replicated.write) { _, _ in
            writes.value.add(1, ordering: .relaxed)
            return Served(port: answered.withLock { $0 })
        }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: port)
        configuration.gracePeriod = .seconds(1)
        let server = try HTTP2Server(
            configuration: configuration, router: router, logger: Logger(label: "replica", factory: { _ in SwiftLogNoOpLogHandler() }))
        let bound = try server.start()
        answered.withLock { $0 = bound }
        return (server, bound)
    }
}

/// `RPCClient.upstream` over several replicas on loopback, through real HTTP/2: calls spread
/// over every replica; one that stops is skipped — no write made after it stopped fails, and
/// none runs twice — and leaves the rotation at its next health check; started again, it
/// rejoins and takes calls.
@Suite("Upstream replicas, live", .serialized)
struct UpstreamReplicasLiveTests {
    @Test("calls are balanced over the replicas; one that stops costs no call, and it rejoins when back")
    func balancedAndFailover() async throws {
        let replicas = try (0..<3).map { _ in try LiveReplica() }
        let target = try #require(UpstreamTarget(replicas.map(\.address.description).joined(separator: ",")))
        let client = try RPCClient.upstream(target, name: "test-svc", logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        defer { Task { await client.close(); for replica in replicas { await replica.stop() } } }
        let balancer = try #require(client.transport as? BalancingTransport)

        var served: [Int: Int] = [:]
        for _ in 0..<30 { served[try await client.unary(Replicated.read, Served(port: 0)).port, default: 0] += 1 }
        #expect(served.count == 3, "\(served)")

        await replicas[1].stop()
        for index in 0..<30 {
            let answer = try await client.unary(Replicated.write, Served(port: index))
            #expect(answer.port != replicas[1].port)
        }
        #expect(replicas.map { $0.writes.value.load(ordering: .relaxed) }.reduce(0, +) == 30)
        #expect(replicas[1].writes.value.load(ordering: .relaxed) == 0)
        #expect(await eventually { !balancer.replicas.inRotation.contains(replicas[1].address) })

        try replicas[1].start()
        #expect(await eventually { balancer.replicas.inRotation.count == 3 })
        served = [:]
        for _ in 0..<30 { served[try await client.unary(Replicated.read, Served(port: 0)).port, default: 0] += 1 }
        #expect(served[replicas[1].port] ?? 0 > 0, "\(served)")
    }

    @Test("a name is looked up to every address it has; a name that does not resolve keeps the members")
    func lookup() async throws {
        let found = await ReplicaSet.systemLookup([SocketAddressText(host: "localhost", port: 7002), SocketAddressText(host: "10.1.2.3", port: 7003)])
        let addresses = try #require(found)
        #expect(addresses.contains(SocketAddressText(host: "127.0.0.1", port: 7002)))
        #expect(addresses.last == SocketAddressText(host: "10.1.2.3", port: 7003))
        #expect(addresses.allSatisfy { UpstreamTarget($0).singleLiteralAddress != nil })
        #expect(await ReplicaSet.systemLookup([SocketAddressText(host: "no-such-host.invalid", port: 1)]) == nil)
    }
}
