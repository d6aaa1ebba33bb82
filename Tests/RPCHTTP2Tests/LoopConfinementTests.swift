@testable import RPCHTTP2
import Testing
import RPC

/// Loop confinement is checked, not trusted: ``EventLoop/inEventLoop`` tells the loop's thread
/// from any other, and in debug builds a loop-only entry point called off its loop stops the
/// process (``EventLoop/assertInLoop()``).
@Suite("Loop confinement")
struct LoopConfinementTests {
    @Test("inEventLoop holds on the loop's own thread only: not on the caller's, nor on another loop's")
    func predicate() async throws {
        let loop = try EventLoop(name: "confined")
        let other = try EventLoop(name: "other")
        #expect(!loop.inEventLoop)
        #expect(await onLoop(loop) { loop.inEventLoop && !other.inEventLoop })
        #expect(await onLoop(other) { !loop.inEventLoop })
        await loop.shutdown()
        await other.shutdown()
    }

    @Test("assertInLoop lets the loop's own thread through")
    func assertionPassesOnTheLoop() async throws {
        let loop = try EventLoop(name: "confined")
        #expect(await onLoop(loop) {
            loop.assertInLoop()
            return true
        })
        await loop.shutdown()
    }

#if DEBUG
    @Test("assertInLoop stops a debug build called off the loop's thread")
    func assertionFiresOffTheLoop() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try! EventLoop(name: "confined")
            loop.assertInLoop()
        }
        let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(standardError.contains("called off the thread of event loop confined"))
    }

    @Test("a client connection's loop-only entry point (shutDown) stops a debug build off its loop")
    func connectionEntryPointAsserts() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try! EventLoop(name: "client-loop")
            let target = SocketAddressText(host: "127.0.0.1", port: 9)
            let connection = ClientConnection(
                target: target, loop: loop, configuration: ClientConfiguration(), resolver: HostResolver(target: target),
                onClose: { _, _ in })
            connection.shutDown(reason: "from the wrong thread")
        }
        let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(standardError.contains("called off the thread of event loop client-loop"))
    }
#endif
}
