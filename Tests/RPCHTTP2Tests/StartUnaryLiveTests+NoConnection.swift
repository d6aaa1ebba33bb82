import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

// startUnary without a connection: an unreachable server, a closed client.
extension LiveTests.StartUnaryLiveTests {
    @Test("a connection that cannot be made completes the call with UNAVAILABLE; during the reconnect backoff at once, on the calling thread")
    func unreachable() async throws {
        let (client, _) = try Self.makeClient(port: try deadPort()) { $0.reconnectInitialBackoff = .seconds(30) }
        let first = UnaryCompletionRecorder()
        client.startUnary(RawUnaryContract.echo, request: Data("x".utf8), options: Self.options, completion: first.completion)
        let error = await first.error()
        #expect(error?.code == .unavailable)
        #expect(first.all.first?.attempt?.serverAnswered != true)
        await first.expectExactlyOnce()

        // The next call meets the backoff: completed before startUnary returns.
        let second = UnaryCompletionRecorder()
        client.startUnary(RawUnaryContract.echo, request: Data("x".utf8), options: Self.options, completion: second.completion)
        #expect(second.count == 1)
        let backoff = await second.error()
        #expect(backoff?.code == .unavailable)
        #expect(backoff?.reason == "UPSTREAM_UNAVAILABLE")
        #expect(second.all.first?.attempt == nil)

        // An idempotent call too: its retries meet the same backoff.
        let idempotent = UnaryCompletionRecorder()
        client.startUnary(
            RawUnaryContract.echo.retargeted(idempotent: true), request: Data("x".utf8), options: Self.options,
            completion: idempotent.completion)
        #expect(await idempotent.error()?.code == .unavailable)
        await idempotent.expectExactlyOnce()
        await client.close()
    }

    @Test("an upstream that stays down through hundreds of failed connections is still answered UNAVAILABLE")
    func longOutage() async throws {
        // Backoff from 1 µs: 1 µs x 1.6^147 does not fit a Duration, so without a capped growth
        // the client crashed at about the 148th failure (with the defaults, after nine minutes).
        let (client, _) = try Self.makeClient(port: try deadPort()) {
            $0.reconnectInitialBackoff = .microseconds(1)
            $0.reconnectMaxBackoff = .microseconds(200)
        }
        var attempts = 0
        var last: RPCError?
        while attempts < 200 {
            let recorder = UnaryCompletionRecorder()
            client.startUnary(RawUnaryContract.echo, request: Data("x".utf8), options: Self.options, completion: recorder.completion)
            guard let error = await recorder.error() else { break }
            last = error
            // A call during the backoff makes no attempt; one after it tries to connect.
            if error.message.contains("backoff") {
                try await Task.sleep(for: .microseconds(250))
            } else {
                attempts += 1
            }
        }
        #expect(last?.code == .unavailable)
        await client.close()
    }

    @Test("a closed client completes the call at once with UNAVAILABLE")
    func closedClient() async throws {
        try await Self.withServer { client, _, state, _ in
            await client.close()
            let recorder = UnaryCompletionRecorder()
            client.startUnary(RawUnaryContract.echo, request: Data("x".utf8), options: Self.options, completion: recorder.completion)
            #expect(recorder.count == 1)
            #expect(await recorder.error()?.code == .unavailable)
            #expect(state.calls(RawUnaryContract.echo) == 0)
        }
    }
}
