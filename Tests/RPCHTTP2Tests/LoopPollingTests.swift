import Foundation
import RPC
@testable import RPCHTTP2
import ServiceTestSupport
import Testing

/// After starting a call a loop polls instead of sleeping, but only while few unary calls are
/// open on it (the count itself: ``LiveTests/LoopOpenCallLiveTests``).
@Suite("Event loop polling")
struct LoopPollingTests {
    @Test("expectWorkSoon polls with up to pollingCallLimit calls open on the loop, not with more")
    func pollsOnlyWithFewCalls() async throws {
        let group = try EventLoopGroup(count: 1, name: "polling")
        let loop = group.loops[0]
        let limit = EventLoop.pollingCallLimit
        let polled = await onLoop(loop) { () -> [Bool] in
            var polled: [Bool] = []
            for open in [0, 1, limit, limit + 1, 64] {
                loop.countOpenCalls(open - loop.openCalls)
                // What it decided, not isPolling: the 50 µs may pass before that is read.
                polled.append(loop.expectWorkSoon())
            }
            loop.countOpenCalls(-loop.openCalls)
            return polled
        }
        #expect(polled == [true, true, true, false, false])
        await group.shutdown()
    }
}
