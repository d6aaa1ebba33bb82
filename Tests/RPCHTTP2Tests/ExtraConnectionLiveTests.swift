import Foundation
import RPC
import RPCHTTP2
import Testing

extension LiveTests {
    /// ``ClientConfiguration/maxExtraConnections``: long-lived calls that take every stream the
    /// server allows on a connection do not make later calls wait for one of them to end.
    @Suite("Extra connections when streams run out")
    struct ExtraConnectionLiveTests {
        /// Opens `count` bidirectional calls on `client` that each send one message and stay open
        /// until released; returns how many got their echo within 5 s, then releases them all.
        static func openHeldCalls(_ count: Int, on client: RPCClient) async throws -> Int {
            let echoed = Counter()
            let released = Counter()  // above 0 once the calls may end
            return try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    group.addTask {
                        _ = try await client.bidirectional(
                            EchoContract.bidi, options: CallOptions(timeout: .seconds(15)),
                            requests: { sender in
                                try await sender.send(TextMessage(text: "held \(index)"))
                                while released.value == 0 { try await Task.sleep(for: .milliseconds(10)) }
                            },
                            responses: { responses in
                                var first = true
                                for try await _ in responses where first {
                                    first = false
                                    echoed.add(1)
                                }
                            })
                    }
                }
                var seen = 0
                for _ in 0..<500 where seen < count {
                    try await Task.sleep(for: .milliseconds(10))
                    seen = echoed.value
                }
                released.add(1)
                try await group.waitForAll()
                return seen
            }
        }

        @Test("calls beyond the server's stream limit go over extra connections instead of waiting for a stream")
        func extraConnectionsWhenFull() async throws {
            try await withLiveServer(configure: { $0.limits.maxConcurrentStreams = 4 }) { live in
                var configuration = ClientConfiguration()
                configuration.connectionCount = 1
                configuration.maxExtraConnections = 8
                let client = try live.makeClient(configuration: configuration)
                // One call first, so the server's limit is known.
                _ = try await client.unary(EchoContract.unary, TextMessage(text: "first"))
                let echoed = try await Self.openHeldCalls(10, on: client)
                await client.close()
                #expect(echoed == 10, "only \(echoed) of 10 held calls started: the rest waited for a stream")
            }
        }

        @Test("without extra connections (the default), calls wait for a stream; past those allowed, too", arguments: [0, 1])
        func extraConnectionsBounded(extra: Int) async throws {
            try await withLiveServer(configure: { $0.limits.maxConcurrentStreams = 2 }) { live in
                var configuration = ClientConfiguration()
                configuration.connectionCount = 1
                configuration.maxExtraConnections = extra
                let client = try live.makeClient(configuration: configuration)
                _ = try await client.unary(EchoContract.unary, TextMessage(text: "first"))
                let echoed = try await Self.openHeldCalls(6, on: client)
                await client.close()
                #expect(echoed == 2 * (1 + extra), "\(echoed) held calls started; \(1 + extra) connection(s) of two streams hold \(2 * (1 + extra))")
            }
        }
    }
}
