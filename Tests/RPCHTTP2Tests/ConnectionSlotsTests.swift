@testable import RPCHTTP2
import Synchronization
import Testing
import RPC

/// How a client's connection slots count connection failures toward the reconnect backoff:
/// only a slot's own connection counts; one the client already replaced (retired, or given up
/// while connecting) says nothing about connecting now.
@Suite("Connection slots")
struct ConnectionSlotsTests {
    /// Connections that are never connected: the slots only compare and hold them.
    static func connections(_ count: Int, on loop: EventLoop) -> [ClientConnection] {
        let target = SocketAddressText(host: "127.0.0.1", port: 9)
        return (0..<count).map { _ in
            ClientConnection(
                target: target, loop: loop, configuration: ClientConfiguration(), resolver: HostResolver(target: target),
                onClose: { _, _ in })
        }
    }

    @Test("a replaced connection that closes leaves the backoff and the slots alone; a slot's own failure counts")
    func replacedConnectionsDoNotTouchTheBackoff() async throws {
        let group = try EventLoopGroup(count: 1, name: "slots-test")
        let all = Self.connections(4, on: group.loops[0])
        let (current0, current1, retiredConnected, retiredConnecting) = (all[0], all[1], all[2], all[3])
        let slots = HTTP2ClientTransport.ConnectionSlots(count: 2, configuration: ClientConfiguration())
        let backoffUntil = ContinuousClock.now + .seconds(60)
        slots.state.withLock { state in
            state.connections = [current0, current1]
            state.retired = [retiredConnected, retiredConnecting]
            state.failures = 3
            state.retryAt = backoffUntil
        }
        // A retired connection that had connected closes after a failed round: the backoff stays.
        slots.connectionClosed(retiredConnected, wasConnected: true)
        // One given up while connecting is no failure to count.
        slots.connectionClosed(retiredConnecting, wasConnected: false)
        let afterRetired = slots.state.withLock { ($0.failures, $0.retryAt, $0.retired.count, $0.connections.compactMap(\.self).count) }
        // A slot's own connection that had connected clears the backoff and empties its slot.
        slots.connectionClosed(current1, wasConnected: true)
        let afterOwn = slots.state.withLock { ($0.failures, $0.retryAt, $0.connections[1] == nil, $0.connections[0] === current0) }
        await group.shutdown()
        #expect(afterRetired.0 == 3)
        #expect(afterRetired.1 == backoffUntil)
        #expect(afterRetired.2 == 0, "the retired connections are let go of")
        #expect(afterRetired.3 == 2, "the slots keep their connections")
        #expect(afterOwn.0 == 0)
        #expect(afterOwn.1 == nil)
        #expect(afterOwn.2 && afterOwn.3)
    }
}
