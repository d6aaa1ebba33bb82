import Foundation
import RPC
@testable import RPCHTTP2
import ServiceTestSupport
import Testing

/// Runs `body` on `loop`'s thread and returns what it returns.
private func onLoop<Value: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        loop.execute { continuation.resume(returning: body()) }
    }
}

/// After starting a call a loop polls instead of sleeping, but only while few calls are open on
/// it; the count follows the streams its connections open and close.
@Suite("Event loop polling")
struct LoopPollingTests {
    @Test("expectWorkSoon polls with up to pollingCallLimit calls open on the loop, not with more")
    func pollsOnlyWithFewCalls() async throws {
        let group = try EventLoopGroup(count: 1, name: "polling")
        let loop = group.loops[0]
        let limit = EventLoop.pollingCallLimit
        // Many first: once polling, a loop keeps polling for its 50 µs whatever comes next.
        let polled = await onLoop(loop) { () -> [Bool] in
            var polled: [Bool] = []
            for open in [64, limit + 1, limit, 1, 0] {
                loop.countOpenCalls(open - loop.openCalls)
                loop.expectWorkSoon()
                polled.append(loop.isPolling)
            }
            return polled
        }
        #expect(polled == [false, false, true, true, true])
        await group.shutdown()
    }
}

extension LiveTests {
    @Suite("Event loop open calls")
    struct LoopOpenCallTests {
        @Test("a server's loop counts the calls open on its connections: opened, answered, and gone with their connection")
        func countsOpenCalls() async throws {
            var serverLoop: EventLoop?
            try await withOneLoopServer(
                loopName: "open-calls", logger: quietLogger, configure: { _ in },
                router: { group in
                    serverLoop = group.loops[0]
                    return .echoRouter(probe: Probe())
                }
            ) { _, port, client in
                let loop = try #require(serverLoop)
                // Streams whose request never ends stay open.
                let socket = try RawSocket(port: port)
                var bytes = HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
                for index in 0..<6 {
                    bytes += HTTP2Bytes.frame(
                        type: HTTP2Bytes.headers, flags: HTTP2Bytes.endHeaders, stream: UInt32(2 * index + 1),
                        payload: HTTP2Bytes.requestBlock(path: EchoContract.unary.path))
                }
                socket.send(bytes)
                #expect(await eventually { await onLoop(loop) { loop.openCalls } == 6 })
                // Answered calls are closed again.
                for _ in 0..<3 {
                    let answer = try await client.unary(EchoContract.unary, TextMessage(text: "x"))
                    #expect(answer.text == "x")
                }
                #expect(await eventually { await onLoop(loop) { loop.openCalls } == 6 }, "answered calls stay counted")
                socket.close()
                #expect(await eventually { await onLoop(loop) { loop.openCalls } == 0 }, "calls of a closed connection stay counted")
            }
        }
    }
}
