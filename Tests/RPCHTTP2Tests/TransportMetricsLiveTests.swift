import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Telemetry
import Testing

extension LiveTests {
    /// The transport's in-flight figures in a registry: what a scrape reads while calls run.
    @Suite("Transport metrics")
    struct TransportMetricsLiveTests {
        @Test("a call being served shows as an open connection, stream and call in flight; none once it ends")
        func serverInFlight() async throws {
            let registry = MetricsRegistry()
            try await withLiveServer(configure: { $0.metrics = registry }) { live in
                let call = Task { try await live.client.unary(EchoContract.sleep, SleepRequest(millis: 1500)) }
                let seen = await eventually(within: .seconds(10)) {
                    registry.value("rpc_server_streams_open") == 1 && registry.value("rpc_server_calls_in_flight") == 1
                }
                #expect(seen, "\(registry.exposition())")
                #expect(registry.value("rpc_server_connections_open") == 1)
                _ = try await call.value
                let ended = await eventually(within: .seconds(10)) { registry.value("rpc_server_streams_open") == 0 }
                #expect(ended, "\(registry.exposition())")
                #expect(registry.value("rpc_server_calls_in_flight") == 0)
            }
        }

        @Test("client calls refused before they are built — deadline gone, no connection during a reconnect's backoff — are counted")
        func refusedClientCallsCounted() async throws {
            // A port that was free a moment ago: the socket closes as soon as its port is read.
            let port = try ListeningSocket().port
            let registry = MetricsRegistry()
            var configuration = ClientConfiguration()
            configuration.metrics = RPCCallMetrics(side: .client, paths: [EchoContract.unary.path], registry: registry)
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: port), configuration: configuration)
            let late = CallOptions(deadline: .now - .seconds(1))
            _ = try? await client.unary(EchoContract.unary, TextMessage(text: "late"), options: late)
            for _ in 0..<5 { _ = try? await client.unary(EchoContract.unary, TextMessage(text: "x"), options: CallOptions(timeout: .seconds(2))) }
            await client.close()
            let series = "{service=\"\(EchoContract.service)\",method=\"Unary\""
            let started = registry.value("rpc_client_calls_started_total\(series)}") ?? 0
            let deadline = registry.value("rpc_client_calls_total\(series),code=\"DEADLINE_EXCEEDED\"}")
            let unavailable = registry.value("rpc_client_calls_total\(series),code=\"UNAVAILABLE\"}") ?? 0
            #expect(deadline == 1, "\(registry.exposition())")
            // Every attempt (retries included) is counted started and finished UNAVAILABLE.
            #expect(unavailable >= 5 && started == unavailable + 1, "\(registry.exposition())")
        }

        @Test("calls beyond the server's concurrent streams wait for a slot, counted, until their streams open")
        func clientWaitingForStreamSlots() async throws {
            try await Self.withOneStreamServer { client, registry in
                let calls = (0..<3).map { _ in Task { try await client.unary(EchoContract.sleep, SleepRequest(millis: 700)) } }
                let waiting = await eventually(within: .seconds(5)) { registry.value("rpc_client_calls_waiting") == 2 }
                #expect(waiting, "\(registry.exposition())")
                for call in calls { _ = try await call.value }
                let emptied = await eventually(within: .seconds(5)) { registry.value("rpc_client_calls_waiting") == 0 }
                #expect(emptied, "\(registry.exposition())")
            }
        }

        @Test("a call whose deadline passes while it waits for a stream slot stops counting as waiting at once")
        func slotWaitEndsWithDeadline() async throws {
            try await Self.withOneStreamServer { client, registry in
                let holder = Task { try await client.unary(EchoContract.sleep, SleepRequest(millis: 4000)) }
                try await Task.sleep(for: .milliseconds(200))  // the holder's stream opens first
                await #expect(throws: RPCError.self) {
                    try await client.unary(EchoContract.sleep, SleepRequest(millis: 0), options: CallOptions(timeout: .milliseconds(500)))
                }
                // The slot is still taken, yet the expired call no longer counts as waiting.
                let emptied = await eventually(within: .seconds(2)) { registry.value("rpc_client_calls_waiting") == 0 }
                #expect(emptied, "\(registry.exposition())")
                _ = try await holder.value
            }
        }

        /// Runs `body` with a client, counting into `registry`, of a server allowing one stream
        /// at a time, already connected (the server's SETTINGS, its limit, read).
        static func withOneStreamServer(
            _ body: (_ client: RPCClient, _ registry: MetricsRegistry) async throws -> Void
        ) async throws {
            try await withLiveServer(configure: { $0.limits.maxConcurrentStreams = 1 }) { live in
                let registry = MetricsRegistry()
                var configuration = ClientConfiguration()
                configuration.metrics = RPCCallMetrics(side: .client, paths: [EchoContract.sleep.path], registry: registry)
                let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: live.port), configuration: configuration)
                _ = try await client.unary(EchoContract.sleep, SleepRequest(millis: 0))
                do {
                    try await body(client, registry)
                } catch {
                    await client.close()
                    throw error
                }
                await client.close()
            }
        }

        @Test("calls made while their connection cannot be made wait, counted; their deadline ends the wait and the count")
        func clientWaiting() async throws {
            // A listener whose one-connection queue is full: a new connection attempt gets no answer.
            let listener = try SilentListener(backlog: 0)
            defer { listener.close() }
            let filler = try RawSocket(port: listener.port)
            defer { filler.close() }
            let registry = MetricsRegistry()
            var configuration = ClientConfiguration()
            configuration.connectTimeout = .seconds(30)
            configuration.metrics = RPCCallMetrics(side: .client, paths: [EchoContract.unary.path], registry: registry)
            let client = try RPCClient(target: SocketAddressText(host: "127.0.0.1", port: listener.port), configuration: configuration)
            let calls = (0..<3).map { index in
                Task { try? await client.unary(EchoContract.unary, TextMessage(text: "\(index)"), options: CallOptions(timeout: .seconds(3))) }
            }
            let waiting = await eventually(within: .seconds(3)) { registry.value("rpc_client_calls_waiting") == 3 }
            #expect(waiting, "\(registry.exposition())")
            for call in calls { _ = await call.value }
            // The loop takes an expired call out of the queue just after its caller is told.
            let emptied = await eventually(within: .seconds(5)) { registry.value("rpc_client_calls_waiting") == 0 }
            #expect(emptied, "\(registry.exposition())")
            let failed = "rpc_client_calls_total{service=\"\(EchoContract.service)\",method=\"Unary\",code=\"DEADLINE_EXCEEDED\"}"
            #expect(registry.value(failed) == 3, "\(registry.exposition())")
            await client.close()
        }
    }
}
