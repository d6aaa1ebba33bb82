import Foundation
import RPC
@testable import RPCHTTP2
import ServiceTestSupport
import Testing

/// A loop's count of open calls (what ``LoopPollingTests`` decides on) follows the unary calls
/// its server connections start and close, over a loopback connection.
extension LiveTests {
    @Suite("Event loop open calls")
    struct LoopOpenCallLiveTests {
        @Test("a server's loop counts its unary calls under way: started, answered, and gone with their connection; not streams")
        func countsOpenCalls() async throws {
            var serverLoop: EventLoop?
            let probe = Probe()
            try await withOneLoopServer(
                loopName: "open-calls", logger: quietLogger, configure: { _ in },
                router: { group in
                    serverLoop = group.loops[0]
                    return .echoRouter(probe: probe)
                }
            ) { _, port, client in
                let loop = try #require(serverLoop)
                let openCalls = { await onLoop(loop) { loop.openCalls } }
                // Two bidirectional streams left open, then six Sleep calls under way: once the
                // sixth Sleep has started, every frame before it has been handled.
                let socket = try RawSocket(port: port)
                var bytes = HTTP2Bytes.preface + HTTP2Bytes.frame(type: HTTP2Bytes.settings)
                for index in 0..<8 {
                    let stream = UInt32(2 * index + 1)
                    let isSleep = index >= 2
                    bytes += HTTP2Bytes.frame(
                        type: HTTP2Bytes.headers, flags: HTTP2Bytes.endHeaders, stream: stream,
                        payload: HTTP2Bytes.requestBlock(path: isSleep ? EchoContract.sleep.path : EchoContract.bidi.path))
                    if isSleep {
                        bytes += HTTP2Bytes.frame(
                            type: HTTP2Bytes.data, flags: HTTP2Bytes.endStream, stream: stream,
                            payload: MessageFraming.frame(Data(#"{"millis":10000}"#.utf8)))
                    }
                }
                socket.send(bytes)
                try #require(await eventually { probe.count(.sleepStarted) == 6 }, "the Sleep handlers never started")
                #expect(await openCalls() == 6, "the Sleep calls are counted, the streams not")
                // Answered calls are closed again.
                for _ in 0..<3 {
                    let answer = try await client.unary(EchoContract.unary, TextMessage(text: "x"))
                    #expect(answer.text == "x")
                }
                #expect(await eventually { await openCalls() == 6 }, "answered calls are no longer counted")
                socket.close()
                #expect(await eventually { await openCalls() == 0 }, "a closed connection's calls are no longer counted")
            }
        }
    }
}
