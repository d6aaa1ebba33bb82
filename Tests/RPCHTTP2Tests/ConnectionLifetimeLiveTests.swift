import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

extension LiveTests {
    /// Idle connections are closed; quiet peers are PINGed and dropped when they do not answer.
    @Suite("Connection lifetime")
    struct ConnectionLifetimeLiveTests {
        /// A client of 127.0.0.1:`port` whose connections are retired after `streams` streams.
        static func client(of port: Int, streamsPerConnection streams: Int) throws -> RPCClient {
            var configuration = ClientConfiguration()
            configuration.maxStreamsPerConnection = streams
            return try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port), configuration: configuration)
        }

        @Test("a connection that has carried its most streams is retired: the next call goes over a new one, and it closes once its calls end")
        func connectionRetires() async throws {
            let (upstream, port) = try LoopAffinityLiveTests.startUpstream()
            let client = try Self.client(of: port, streamsPerConnection: 4)
            var peers: [String] = []
            for _ in 0..<10 {
                let answer = try await client.unary(LoopAffinityLiveTests.whereAmI, TextMessage(text: ""))
                peers.append(LoopAffinityLiveTests.peer(of: answer))
            }
            // Four calls per connection, in order: 4 + 4 + 2.
            #expect(Set(peers).count == 3, "peers: \(peers)")
            #expect(peers[0..<4].allSatisfy { $0 == peers[0] } && peers[4..<8].allSatisfy { $0 == peers[4] } && peers[8] == peers[9])
            // The two retired connections closed; the third is still in use.
            #expect(await eventually(within: .seconds(5)) { upstream.openConnectionCount == 1 })

            await client.close()
            await upstream.shutdown()
        }

        @Test("a call still open when its connection is retired finishes on it; the connection closes after it")
        func retiredConnectionFinishesItsCalls() async throws {
            try await withLiveServer { live in
                let client = try Self.client(of: live.port, streamsPerConnection: 3)
                let options = CallOptions(timeout: .seconds(5))
                let slow = Task { try await client.unary(EchoContract.sleep, SleepRequest(millis: 400), options: options) }
                #expect(await eventually(within: .seconds(5)) { live.probe.count(.sleepStarted) == 1 })
                for text in ["two", "three", "four"] {  // "three" retires the first connection, "four" opens the next
                    #expect(try await client.unary(EchoContract.unary, TextMessage(text: text), options: options).text == text)
                }
                #expect(live.server.openConnectionCount == 2)
                #expect(try await slow.value.text == "slept")
                #expect(await eventually(within: .seconds(5)) { live.server.openConnectionCount == 1 })
                await client.close()
            }
        }

        @Test("300 concurrent calls over connections retired every three streams all succeed: none is lost to a retirement")
        func callsAcrossRetirements() async throws {
            try await withLiveServer { live in
                let client = try Self.client(of: live.port, streamsPerConnection: 3)
                // Echo is not idempotent: a call is retried only if it was never sent.
                let failures = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for index in 0..<300 {
                        group.addTask {
                            let text = "call \(index)"
                            let answer = try? await client.unary(EchoContract.unary, TextMessage(text: text), options: CallOptions(timeout: .seconds(10)))
                            return answer?.text == text
                        }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 0 : 1) }
                }
                #expect(failures == 0)
                await client.close()
            }
        }

        @Test("an idle connection is closed with GOAWAY, and the client reconnects for the next call")
        func idleConnectionCloses() async throws {
            try await withLiveServer(configure: {
                $0.idleTimeout = .milliseconds(200)
                $0.keepaliveInterval = .milliseconds(100)
            }) { live in
                let socket = try RawSocket(port: live.port)
                socket.send(HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings))
                let (bytes, closed) = await socket.readUntilClosed(timeout: .seconds(5))
                socket.close()
                #expect(closed, "the server kept an idle connection open")
                let frames = HTTP2Bytes.parseFrames(bytes)
                #expect(frames.contains { $0.type == HTTP2Bytes.goAway }, "no GOAWAY before closing: \(frames)")

                // Our client notices the close and makes a new connection.
                let first = try await live.client.unary(EchoContract.unary, TextMessage(text: "one"))
                try await Task.sleep(for: .milliseconds(600))
                let second = try await live.client.unary(EchoContract.unary, TextMessage(text: "two"))
                #expect(first.text == "one" && second.text == "two")
            }
        }

        @Test("a connection with no calls is closed at the idle timeout even though it answers every PING")
        func idleDespitePings() async throws {
            try await withLiveServer(configure: {
                $0.idleTimeout = .milliseconds(400)
                $0.keepaliveInterval = .milliseconds(100)
            }) { live in
                // Our client acknowledges the server's PINGs (nghttp2 does), so its socket is never
                // quiet for a whole idle timeout; it makes no call after the first.
                _ = try await live.client.unary(EchoContract.unary, TextMessage(text: "one"))
                #expect(live.server.openConnectionCount == 1)
                var closed = false
                for _ in 0..<300 where !closed {
                    try await Task.sleep(for: .milliseconds(10))
                    closed = live.server.openConnectionCount == 0
                }
                #expect(closed, "a connection with no calls, answering PINGs, was kept past its idle timeout")
                // And the client reconnects for its next call.
                let next = try await live.client.unary(EchoContract.unary, TextMessage(text: "two"))
                #expect(next.text == "two")
            }
        }

        @Test("a connection with a call in flight is kept open past the idle timeout, answering PINGs")
        func busyConnectionStays() async throws {
            try await withLiveServer(configure: {
                $0.idleTimeout = .milliseconds(100)
                $0.keepaliveInterval = .milliseconds(100)
            }) { live in
                // Our client answers PINGs (nghttp2 acknowledges them), so a long call survives.
                let answer = try await live.client.unary(EchoContract.sleep, SleepRequest(millis: 700), options: CallOptions(timeout: .seconds(5)))
                #expect(answer.text == "slept")
            }
        }

        @Test("a peer that never answers the keepalive PING is disconnected")
        func unansweredPingDisconnects() async throws {
            try await withLiveServer(configure: {
                $0.idleTimeout = .seconds(30)
                $0.keepaliveInterval = .milliseconds(100)
            }) { live in
                let socket = try RawSocket(port: live.port)
                // A handshake, then silence: no SETTINGS ACK, no PING ACK.
                socket.send(HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings))
                let (bytes, closed) = await socket.readUntilClosed(timeout: .seconds(5))
                socket.close()
                #expect(closed, "the server kept a connection whose peer ignores PINGs")
                #expect(HTTP2Bytes.parseFrames(bytes).contains { $0.type == 6 }, "no PING was sent")
            }
        }

        @Test("a client with keepalive gives up on a server that went silent instead of waiting out the deadline")
        func clientKeepaliveNoticesSilence() async throws {
            let silent = try SilentListener()
            defer { silent.close() }
            var configuration = ClientConfiguration()
            configuration.keepaliveInterval = .milliseconds(200)
            configuration.keepaliveTimeout = .milliseconds(300)
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: silent.port), configuration: configuration)
            let error = await expectRPCError(.unavailable) {
                try await client.unary(EchoContract.unary, TextMessage(text: "anyone?"), options: CallOptions(timeout: .seconds(60)))
            }
            #expect(error?.message.contains("keepalive") == true, "\(String(describing: error))")
            await client.close()
        }

        @Test("a client with keepalive keeps a long call to a healthy server: its pings are answered")
        func clientKeepaliveAnswered() async throws {
            try await withLiveServer { live in
                var configuration = ClientConfiguration()
                configuration.keepaliveInterval = .milliseconds(100)
                configuration.keepaliveTimeout = .milliseconds(500)
                let client = try live.makeClient(configuration: configuration)
                let answer = try await client.unary(
                    EchoContract.sleep, SleepRequest(millis: 1_000), options: CallOptions(timeout: .seconds(10)))
                #expect(answer.text == "slept")
                await client.close()
            }
        }
    }
}
