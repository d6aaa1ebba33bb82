import Foundation
import RPC
@testable import RPCHTTP2
import ServiceTestSupport
import Synchronization
import Testing

/// Where handlers and client calls run when a server and its clients share event loops, as the
/// gateway does: handlers kept on their loop after a suspension, and one upstream connection
/// per loop, used by the calls made on that loop.
extension LiveTests {
    @Suite("Loop affinity")
    struct LoopAffinityLiveTests {
        /// A unary method whose handler suspends, then answers with the index of the loop of
        /// `group` it resumed on ("-" off the loops) and the peer address of its connection.
        static let whereAmI = MethodDescriptor<TextMessage, TextMessage>(
            service: "test.v1.AffinityService", method: "WhereAmI", kind: .unary)
        /// A unary method that calls `whereAmI` on the upstream and returns its answer.
        static let relay = MethodDescriptor<TextMessage, TextMessage>(
            service: "test.v1.AffinityService", method: "Relay", kind: .unary)

        /// Which loop of `group` runs the caller: its index, or "-".
        static func loopIndex(in group: EventLoopGroup?) -> String {
            group?.indexOfCurrentLoop().map(String.init) ?? "-"
        }

        static func whereAmIRouter(group: EventLoopGroup? = nil) -> Router {
            var router = Router()
            router.unary(whereAmI) { _, context in
                try await Task.sleep(for: .milliseconds(1))
                return TextMessage(text: "\(loopIndex(in: group))|\(context.peer)")
            }
            return router
        }

        /// A server of `whereAmI` on its own loops, and its port.
        static func startUpstream() throws -> (HTTP2Server, Int) {
            let server = try HTTP2Server(
                configuration: ServerConfiguration(host: "127.0.0.1", port: 0), router: whereAmIRouter(), logger: quietLogger)
            return (server, try server.start())
        }

        /// A server of `whereAmI` on two loops of its own (named server-0 and server-1, which it
        /// hands accepted connections to in turn), and its address.
        static func startTwoLoopUpstream() throws -> (HTTP2Server, SocketAddressText) {
            var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
            configuration.loopCount = 2
            let server = try HTTP2Server(configuration: configuration, router: whereAmIRouter(), logger: quietLogger)
            return (server, SocketAddressText(host: "127.0.0.1", port: try server.start()))
        }

        /// A raw unary call of `method` made on `group`'s loop `index`, so over that loop's slot of `client`.
        static func unary(
            _ method: MethodInfo, _ request: Data, on client: RPCClient, loop index: Int, of group: EventLoopGroup
        ) async throws -> Data {
            let result = await withCheckedContinuation { (done: CheckedContinuation<Result<Data, RPCError>, Never>) in
                group.loops[index].execute {
                    client.startUnary(method, request: request, options: CallOptions()) { result, _ in done.resume(returning: result) }
                }
            }
            return try result.get()
        }

        /// The peer address in a `whereAmI` answer: which connection the call came over.
        static func peer(of answer: TextMessage) -> String {
            String(answer.text.split(separator: "|").last ?? "")
        }

        @Test("with handlersStayOnLoop a handler resumes on its loop after suspending; without, on the pool")
        func handlersResumeOnTheirLoop() async throws {
            for stayOnLoop in [true, false] {
                let group = try EventLoopGroup(count: 2, name: "affinity")
                var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
                configuration.handlersStayOnLoop = stayOnLoop
                let server = HTTP2Server(
                    configuration: configuration, router: Self.whereAmIRouter(group: group), logger: quietLogger, group: group,
                    ownsGroup: true)
                let port = try server.start()
                let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port))
                var threads: [String] = []
                for _ in 0..<10 {
                    let answer = try await client.unary(Self.whereAmI, TextMessage(text: ""))
                    threads.append(String(answer.text.split(separator: "|").first ?? ""))
                }
                await client.close()
                await server.shutdown()
                let onLoops = threads.filter { $0 != "-" }
                if stayOnLoop {
                    #expect(onLoops.count == threads.count, "threads: \(threads)")
                } else {
                    #expect(onLoops.isEmpty, "threads: \(threads)")
                }
            }
        }

        @Test("a client on a group keeps one connection per loop; connectionCount overrides it")
        func oneConnectionPerLoop() async throws {
            let (upstream, port) = try Self.startUpstream()
            let group = try EventLoopGroup(count: 2, name: "affinity-client")
            for (count, expected) in [(Int?.none, 2), (1, 1), (3, 3)] {
                var configuration = ClientConfiguration()
                configuration.connectionCount = count
                let client = RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port), configuration: configuration, group: group)
                var peers = Set<String>()
                for _ in 0..<12 {
                    let answer = try await client.unary(Self.whereAmI, TextMessage(text: ""))
                    peers.insert(Self.peer(of: answer))
                }
                await client.close()
                #expect(peers.count == expected, "connectionCount \(String(describing: count)): peers \(peers)")
            }
            await group.shutdown()
            await upstream.shutdown()
        }

        @Test("a client connects its empty slots together, so another client's connection between its first calls cannot put two on one upstream loop")
        func slotsConnectTogether() async throws {
            let (upstream, target) = try Self.startTwoLoopUpstream()
            var single = ClientConfiguration()
            single.connectionCount = 1
            let group = try EventLoopGroup(count: 2, name: "affinity-slots")
            let client = RPCClient(target: target, group: group)  // two slots, one per loop
            var others: [RPCClient] = []
            /// A call from a client of its own: one more connection, accepted on the upstream's next loop.
            func connectAnother() async throws {
                let other = try RPCClient(target: target, configuration: single)
                others.append(other)
                _ = try await other.unary(Self.whereAmI, TextMessage(text: ""))
            }
            try await connectAnother()
            // Off the client's loops, calls take its slots in turn: the first goes over slot 0.
            _ = try await client.unary(Self.whereAmI, TextMessage(text: ""))
            let bothConnected = await eventually(within: .seconds(2)) { upstream.openConnectionCount == 3 }
            try await connectAnother()
            _ = try await client.unary(Self.whereAmI, TextMessage(text: ""))  // slot 1
            for other in others { await other.close() }
            let othersGone = await eventually { upstream.openConnectionCount == 2 }
            let loops = upstream.loopsOfOpenConnections
            await client.close()
            await group.shutdown()
            await upstream.shutdown()
            #expect(bothConnected, "slot 1 connected with slot 0")
            #expect(othersGone)
            // One by one, they were accepted 2nd and 4th: both on the upstream's second loop.
            #expect(Set(loops).count == 2, "the client's connections are on upstream loops \(loops)")
        }

        @Test("a slot whose connection retires reconnects with the others, so its replacement cannot land on the upstream loop of another slot")
        func retiredSlotReconnectsWithTheOthers() async throws {
            let (upstream, target) = try Self.startTwoLoopUpstream()
            let group = try EventLoopGroup(count: 2, name: "affinity-retire")
            var configuration = ClientConfiguration()
            configuration.maxStreamsPerConnection = 2
            let client = RPCClient(target: target, configuration: configuration, group: group)
            let request = try JSONCodec.shared.encode(TextMessage(text: ""))
            @discardableResult
            func call(onLoop index: Int) async throws -> TextMessage {
                let answer = try await Self.unary(Self.whereAmI.info, request, on: client, loop: index, of: group)
                return try JSONCodec.shared.decode(TextMessage.self, from: answer)
            }
            try await call(onLoop: 0)  // both slots connect, accepted 1st and 2nd: one on each upstream loop
            let bothConnected = await eventually(within: .seconds(2)) { upstream.openConnectionCount == 2 }
            let slot1Loop = upstream.loopOfConnection(from: Self.peer(of: try await call(onLoop: 1)))
            try await call(onLoop: 0)  // slot 0's second stream: its connection retires
            // The upstream hands accepted connections to server-0, server-1 in turn, and has
            // accepted two: the next goes to server-0. Another client's connection first, when
            // slot 1 is on server-1, so that slot 0's new connection, made alone, would be
            // accepted on slot 1's loop.
            var others: [RPCClient] = []
            if slot1Loop == "server-1" {
                var single = ClientConfiguration()
                single.connectionCount = 1
                let other = try RPCClient(target: target, configuration: single)
                others.append(other)
                _ = try await other.unary(Self.whereAmI, TextMessage(text: ""))
            }
            try await call(onLoop: 0)  // slot 0 reconnects
            for other in others { await other.close() }
            let spread = await eventually(within: .seconds(3)) {
                upstream.openConnectionCount == 2 && Set(upstream.loopsOfOpenConnections).count == 2
            }
            let loops = upstream.loopsOfOpenConnections
            await client.close()
            await group.shutdown()
            await upstream.shutdown()
            #expect(bothConnected)
            #expect(slot1Loop != nil)
            #expect(spread, "the client's connections are on upstream loops \(loops)")
        }

        @Test("closing a client ends the calls on connections it retired when it replaced them")
        func closeReachesRetiredConnections() async throws {
            try await withLiveServer { live in
                let group = try EventLoopGroup(count: 2, name: "affinity-close")
                var configuration = ClientConfiguration()
                configuration.maxStreamsPerConnection = 2
                let client = RPCClient(target: SocketAddressText(host: "127.0.0.1", port: live.port), configuration: configuration, group: group)
                // A stream over slot 0, open throughout.
                let made = await onLoop(group.loops[0]) { Result { try client.makeCall(path: FixtureContract.rawEcho.path, options: CallOptions()) } }
                let stream = try made.get()
                try await stream.send(Data("open".utf8))
                let echoed = try await stream.nextMessage()
                // Slot 1's connection retires after its second call; the third replaces every
                // slot's connection, retiring slot 0's with the stream on it.
                let request = try JSONCodec.shared.encode(TextMessage(text: "x"))
                for _ in 0..<3 { _ = try await Self.unary(EchoContract.unary.info, request, on: client, loop: 1, of: group) }
                let ended = Counter()
                let reader = Task {
                    do {
                        while try await stream.nextMessage() != nil {}
                    } catch let error as RPCError where error.code == .unavailable {
                        ended.add(1)
                    }
                }
                await client.close()
                let endedAtOnce = await eventually(within: .seconds(3)) { ended.value == 1 }
                reader.cancel()
                stream.cancel()
                await group.shutdown()
                #expect(echoed.map { String(decoding: $0, as: UTF8.self) } == "open")
                #expect(endedAtOnce, "the stream on the retired connection outlived close()")
            }
        }

        @Test("calls made on a loop use that loop's connection: a relay on two loops reaches its upstream over both")
        func callsFromALoopUseItsConnection() async throws {
            let (upstream, upstreamPort) = try Self.startUpstream()
            let group = try EventLoopGroup(count: 2, name: "affinity-relay")
            let upstreamClient = RPCClient(target: SocketAddressText(host: "127.0.0.1", port: upstreamPort), group: group)
            // Which upstream connections each relay loop used, by the relay's loop index.
            let seen = Mutex<[String: Set<String>]>([:])
            var router = Router()
            router.unary(Self.relay) { request, _ in
                let loop = Self.loopIndex(in: group)
                let answer = try await upstreamClient.unary(Self.whereAmI, request)
                let peer = Self.peer(of: answer)
                seen.withLock { _ = $0[loop, default: []].insert(peer) }
                return answer
            }
            var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
            configuration.handlersStayOnLoop = true
            let relay = HTTP2Server(configuration: configuration, router: router, logger: quietLogger, group: group)
            let relayPort = try relay.start()
            // Two clients: the relay server spreads their connections over its two loops.
            let clients = try (0..<2).map { _ in try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: relayPort)) }
            for _ in 0..<10 {
                for client in clients { _ = try await client.unary(Self.relay, TextMessage(text: "")) }
            }
            for client in clients { await client.close() }
            await relay.shutdown()
            await upstreamClient.close()
            await group.shutdown()
            await upstream.shutdown()
            let byLoop = seen.withLock { $0 }
            #expect(byLoop.count == 2, "relay threads: \(byLoop)")
            #expect(!byLoop.keys.contains("-"), "relay threads: \(byLoop)")
            // Each loop always used one connection, and the two loops used different ones.
            #expect(byLoop.values.allSatisfy { $0.count == 1 }, "connections per loop: \(byLoop)")
            #expect(Set(byLoop.values.flatMap { $0 }).count == 2, "connections: \(byLoop)")
        }

        @Test("a job for a stopped loop runs on the pool instead of being lost")
        func jobsOutliveTheirLoop() async throws {
            let loop = try EventLoop(name: "affinity-stopped")
            await loop.shutdown()
            let ran = await Task(executorPreference: loop) { true }.value
            #expect(ran)
        }
    }
}
