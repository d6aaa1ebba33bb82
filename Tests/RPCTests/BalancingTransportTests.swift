import Foundation
import JSON
import RPC
import Synchronization
import Testing

/// A message naming the replica that answered.
private struct Answer: RPCMessage, Equatable {
    var replica: String
    static let fields = [FieldDescriptor("replica", "String")]
}

/// The method every replica serves: it answers its own name.
private let whoAmI = MethodDescriptor<Answer, Answer>(service: "test.replicas.v1.Replicas", method: "WhoAmI", kind: .unary)

/// A replica reached in process: a router answering its name, behind a transport that can be
/// taken down (its calls then refused at once, as a client in reconnect backoff refuses them).
private final class FakeReplica: ClientTransport {
    let address: SocketAddressText
    let inner: InProcessTransport
    let down = Atomic<Bool>(false)
    let closes = Atomic<Int>(0)

    init(port: Int) {
        address = SocketAddressText(host: "10.0.0.\(port % 250)", port: port)
        var router = Router()
        let name = address.description
        router.unary(whoAmI) { _, _ in Answer(replica: name) }
        inner = InProcessTransport(router: router)
    }

    func startCall(path: String, options: CallOptions, prepare: (any ClientCall) -> Void) throws(RPCError) -> any ClientCall {
        if down.load(ordering: .relaxed) {
            throw RPCError(code: .unavailable, reason: "UPSTREAM_UNAVAILABLE", message: "\(address) is unreachable")
        }
        return try inner.startCall(path: path, options: options, prepare: prepare)
    }

    var isClosed: Bool { inner.isClosed }

    func close() async {
        closes.add(1, ordering: .relaxed)
        await inner.close()
    }
}

/// `BalancingTransport` over `ReplicaSet`: round robin over the replicas in rotation, skipping
/// those that refuse, the others used only when no replica is in rotation, membership changes
/// followed and removed replicas' transports closed.
@Suite("Balancing over replicas")
struct BalancingTransportTests {
    /// A balanced client over `replicas` (able to reach those of `reachable` too, when a
    /// lookup finds them), and the set.
    private func client(
        over replicas: [FakeReplica], reachable: [FakeReplica] = [], observer: ReplicaSet.Observer? = nil
    ) -> (RPCClient, ReplicaSet) {
        let set = ReplicaSet(name: "test-svc", targets: replicas.map(\.address), observer: observer)
        let byAddress = Dictionary((replicas + reachable).map { ($0.address, $0) }, uniquingKeysWith: { first, _ in first })
        let transport = BalancingTransport(replicas: set) { address in
            guard let replica = byAddress[address] else { throw RPCError(code: .unavailable, message: "no such replica") }
            return replica
        }
        return (RPCClient(transport: transport), set)
    }

    /// Who answered each of `count` calls, in order.
    private func answers(_ client: RPCClient, count: Int) async throws -> [String] {
        var answers: [String] = []
        for _ in 0..<count { answers.append(try await client.unary(whoAmI, Answer(replica: "")).replica) }
        return answers
    }

    @Test("calls go round the replicas in turn")
    func roundRobin() async throws {
        let replicas = (1...3).map { FakeReplica(port: 7000 + $0) }
        let (client, _) = client(over: replicas)
        let answered = try await answers(client, count: 30)
        let counts = Dictionary(grouping: answered, by: \.self).mapValues(\.count)
        #expect(counts.count == 3 && counts.values.allSatisfy { $0 == 10 }, "\(counts)")
        #expect(Set(answered.prefix(3)).count == 3)
        await client.close()
    }

    @Test("a replica that refuses is skipped at once, leaves the rotation, and a passing check brings it back")
    func refusingReplicaLeavesTheRotation() async throws {
        let replicas = (1...3).map { FakeReplica(port: 7100 + $0) }
        let changes = Mutex<[ReplicaSet.Change]>([])
        let (client, set) = client(over: replicas) { change in changes.withLock { $0.append(change) } }
        replicas[1].down.store(true, ordering: .relaxed)
        let answered = try await answers(client, count: 12)
        #expect(!answered.contains(replicas[1].address.description))
        #expect(Set(answered) == [replicas[0].address.description, replicas[2].address.description])
        #expect(set.inRotation == [replicas[0].address, replicas[2].address])
        #expect(changes.withLock { $0 } == [.left(replicas[1].address)])

        replicas[1].down.store(false, ordering: .relaxed)
        await set.refresh(resolve: nil) { _ in true }
        #expect(set.inRotation.count == 3)
        #expect(changes.withLock { $0 } == [.left(replicas[1].address), .rejoined(replicas[1].address)])
        #expect(Set(try await answers(client, count: 6)).count == 3)
        await client.close()
    }

    @Test("replicas out of rotation still take calls when no replica is in it")
    func lastResort() async throws {
        let replicas = (1...2).map { FakeReplica(port: 7200 + $0) }
        let (client, set) = client(over: replicas)
        await set.refresh(resolve: nil) { _ in false }  // every check fails, yet both still serve
        #expect(set.inRotation.isEmpty)
        #expect(Set(try await answers(client, count: 4)).count == 2)
        // Only one in rotation: it takes every call.
        await set.refresh(resolve: nil) { $0 == replicas[1].address }
        #expect(Set(try await answers(client, count: 4)) == [replicas[1].address.description])
        await client.close()
    }

    @Test("when every replica refuses, the call fails UNAVAILABLE naming the service")
    func noReplicaReachable() async throws {
        let replicas = (1...2).map { FakeReplica(port: 7300 + $0) }
        let (client, _) = client(over: replicas)
        for replica in replicas { replica.down.store(true, ordering: .relaxed) }
        let error = await #expect(throws: RPCError.self) { try await client.unary(whoAmI, Answer(replica: "")) }
        #expect(error?.code == .unavailable)
        await client.close()
    }

    @Test("a lookup that finds other replicas: new ones take calls, the gone ones' transports are closed")
    func membershipFollowsTheLookup() async throws {
        let replicas = (1...3).map { FakeReplica(port: 7400 + $0) }
        let (client, set) = client(over: Array(replicas.prefix(2)), reachable: replicas)
        #expect(Set(try await answers(client, count: 4)).count == 2)
        let generation = set.generation
        await set.refresh(resolve: { _ in [replicas[1].address, replicas[2].address] }, check: { _ in true })
        #expect(set.members == [replicas[1].address, replicas[2].address] && set.generation == generation + 1)
        #expect(Set(try await answers(client, count: 4)) == [replicas[1].address.description, replicas[2].address.description])
        try await eventually { replicas[0].closes.load(ordering: .relaxed) == 1 }
        // A failed lookup (nil) or an empty one leaves the members as they are.
        await set.refresh(resolve: { _ in nil }, check: { _ in true })
        await set.refresh(resolve: { _ in [] }, check: { _ in true })
        #expect(set.members == [replicas[1].address, replicas[2].address])
        await client.close()
        #expect(replicas[1].closes.load(ordering: .relaxed) == 1 && replicas[2].closes.load(ordering: .relaxed) == 1)
    }

    @Test("the order starts at each replica in turn and puts those out of rotation last")
    func order() {
        let addresses = (1...3).map { SocketAddressText(host: "10.0.0.\($0)", port: 1) }
        let set = ReplicaSet(name: "s", targets: addresses + [addresses[0]])
        #expect(set.members == addresses)
        #expect(set.order(startingAt: 0) == addresses)
        #expect(set.order(startingAt: 4) == [addresses[1], addresses[2], addresses[0]])
        set.reportUnreachable(addresses[1])
        #expect(set.order(startingAt: 1) == [addresses[2], addresses[0], addresses[1]])
        #expect(set.order(startingAt: Int.min) .count == 3)
    }

    @Test("targets parse as one or several host:port, and only one literal address needs no balancing")
    func targets() {
        #expect(UpstreamTarget("10.0.0.1:7002")?.singleLiteralAddress == SocketAddressText(host: "10.0.0.1", port: 7002))
        #expect(UpstreamTarget("[fd00::5]:7002")?.singleLiteralAddress?.host == "fd00::5")
        #expect(UpstreamTarget("catalog:7002")?.singleLiteralAddress == nil)
        let several = UpstreamTarget("10.0.0.1:7002, 10.0.0.2:7002")
        #expect(several?.addresses.count == 2 && several?.singleLiteralAddress == nil)
        #expect(several?.description == "10.0.0.1:7002,10.0.0.2:7002")
        for bad in ["", ",", "10.0.0.1:7002,", "nohost", "a:99999", "a:1,b"] { #expect(UpstreamTarget(bad) == nil, "\(bad)") }
    }
}

extension ReplicaSet {
    /// The order a call numbered `start` tries the members in (``rotation``, spelled out).
    fileprivate func order(startingAt start: Int) -> [SocketAddressText] {
        let rotation = self.rotation
        return rotation.addresses.indices.map { rotation.address(call: start, attempt: $0) }
    }
}

/// Polls `condition` every 10 ms for up to 5 s.
private func eventually(_ condition: () -> Bool) async throws {
    for _ in 0..<500 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("the condition never held")
}
