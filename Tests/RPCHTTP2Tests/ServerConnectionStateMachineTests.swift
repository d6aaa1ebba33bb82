@testable import RPCHTTP2
import Testing

/// A server connection's life cycle without a socket: draining, closing, and what each
/// housekeeping round of ``ServerConnectionStateMachine`` decides.
@Suite("Server connection state machine")
struct ServerConnectionStateMachineTests {
    /// One second in the machine's clock.
    private static let second: UInt64 = 1_000_000_000
    /// Idle after 300 s, keepalive every 60 s, send timeout 60 s.
    private static let timeouts = ServerConnectionStateMachine.Timeouts(idle: 300 * second, keepalive: 60 * second, send: 60 * second)

    /// A housekeeping round at `now` (seconds) with the socket last read at `lastRead`.
    private func round(
        _ machine: inout ServerConnectionStateMachine, at now: UInt64, streamsOpen: Bool = true, lastRead: UInt64? = nil,
        stalledSince: UInt64? = nil
    ) -> ServerConnectionStateMachine.HousekeepingAction {
        machine.housekeeping(
            now: now * Self.second, streamsOpen: streamsOpen, lastRead: (lastRead ?? now) * Self.second,
            outputStalledSince: stalledSince.map { $0 * Self.second }, timeouts: Self.timeouts)
    }

    @Test("a graceful shutdown drains once; its final GOAWAY is skipped once the connection has closed")
    func drain() {
        var machine = ServerConnectionStateMachine(now: 0)
        #expect(machine.state == .open)
        #expect(machine.beginDrain() == true)
        #expect(machine.isDraining && machine.finalGoAwayDue())
        #expect(machine.beginDrain() == false)  // a second SIGTERM sends nothing more
        #expect(machine.close() == true)
        #expect(!machine.finalGoAwayDue())  // the timer fires after the close
        #expect(machine.beginDrain() == false)  // drain after close: nothing
        #expect(machine.state == .closed)
    }

    @Test("closing twice closes once; housekeeping after close does nothing")
    func closeTwice() {
        var machine = ServerConnectionStateMachine(now: 0)
        #expect(machine.close() == true)
        #expect(machine.close() == false)
        #expect(round(&machine, at: 1000, streamsOpen: false) == .none)
    }

    @Test("a draining connection flushes when its last stream closes, not before; an open one never")
    func lastStreamOfDrain() {
        var machine = ServerConnectionStateMachine(now: 0)
        #expect(!machine.streamClosed(streamsLeft: 0))
        #expect(machine.beginDrain() == true)
        #expect(!machine.streamClosed(streamsLeft: 2))
        #expect(machine.streamClosed(streamsLeft: 0))
    }

    @Test("idle counts from the last stream activity, not from traffic: PINGs answered do not keep it")
    func idle() {
        var machine = ServerConnectionStateMachine(now: 0)
        machine.streamActivity(at: 100 * Self.second)
        #expect(round(&machine, at: 399, streamsOpen: false) == .carryOn(ping: false))
        #expect(round(&machine, at: 400, streamsOpen: false, lastRead: 399) == .closeIdle)
        #expect(round(&machine, at: 400, streamsOpen: true) == .carryOn(ping: false))  // a stream open: not idle
    }

    @Test("a quiet connection is pinged once; the PING unanswered for an interval closes it, answered it does not")
    func keepalive() {
        var machine = ServerConnectionStateMachine(now: 0)
        #expect(round(&machine, at: 59, lastRead: 0) == .carryOn(ping: false))
        #expect(round(&machine, at: 60, lastRead: 0) == .carryOn(ping: true))
        #expect(machine.pingSentAt == 60 * Self.second)
        #expect(round(&machine, at: 90, lastRead: 0) == .carryOn(ping: false))  // one PING at a time
        #expect(round(&machine, at: 120, lastRead: 0) == .closeUnanswered)
        var answered = ServerConnectionStateMachine(now: 0)
        #expect(round(&answered, at: 60, lastRead: 0) == .carryOn(ping: true))
        answered.pingAcknowledged()
        #expect(answered.pingSentAt == nil)
        #expect(round(&answered, at: 120, lastRead: 61) == .carryOn(ping: false))
    }

    @Test("a socket that takes no data for the send timeout closes the connection")
    func sendTimeout() {
        var machine = ServerConnectionStateMachine(now: 0)
        #expect(round(&machine, at: 59, stalledSince: 0) == .carryOn(ping: false))
        #expect(round(&machine, at: 60, stalledSince: 0) == .closeSendTimeout)
    }

    @Test("idle is decided before an unanswered PING, and that before the send timeout")
    func order() {
        var machine = ServerConnectionStateMachine(now: 0)
        #expect(round(&machine, at: 60, lastRead: 0) == .carryOn(ping: true))
        #expect(round(&machine, at: 300, streamsOpen: false, lastRead: 0, stalledSince: 0) == .closeIdle)
        #expect(round(&machine, at: 300, streamsOpen: true, lastRead: 0, stalledSince: 0) == .closeUnanswered)
    }
}
