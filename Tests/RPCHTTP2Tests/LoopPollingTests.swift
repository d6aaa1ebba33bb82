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
        @Test("a server's loop counts its unary calls under way: started, answered, and gone with their connection; not streams")
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
                let openCalls = { await onLoop(loop) { loop.openCalls } }
                // Six Sleep calls under way, and two bidirectional streams left open.
                let socket = try RawSocket(port: port)
                var bytes = HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
                for index in 0..<8 {
                    let stream = UInt32(2 * index + 1)
                    let path = index < 6 ? EchoContract.sleep.path : EchoContract.bidi.path
                    bytes += HTTP2Bytes.frame(
                        type: HTTP2Bytes.headers, flags: HTTP2Bytes.endHeaders, stream: stream,
                        payload: HTTP2Bytes.requestBlock(path: path))
                    if index < 6 {
                        bytes += HTTP2Bytes.frame(
                            type: HTTP2Bytes.data, flags: HTTP2Bytes.endStream, stream: stream,
                            payload: MessageFraming.frame(Data(#"{"millis":10000}"#.utf8)))
                    }
                }
                socket.send(bytes)
                #expect(await eventually { await openCalls() == 6 }, "Sleep calls counted, streams not")
                // Answered calls are closed again.
                for _ in 0..<3 {
                    let answer = try await client.unary(EchoContract.unary, TextMessage(text: "x"))
                    #expect(answer.text == "x")
                }
                #expect(await eventually { await openCalls() == 6 }, "answered calls stay counted")
                socket.close()
                #expect(await eventually { await openCalls() == 0 }, "calls of a closed connection stay counted")
            }
        }
    }
}
