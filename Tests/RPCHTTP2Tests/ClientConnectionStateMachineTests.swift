@testable import RPCHTTP2
import Testing

/// A client connection's life cycle without a socket: each event of
/// ``ClientConnectionStateMachine`` and what it tells the connection to do.
@Suite("Client connection state machine")
struct ClientConnectionStateMachineTests {
    /// A machine that has connected and read the server's SETTINGS.
    private func ready(maxStreams: Int = 1000) -> ClientConnectionStateMachine {
        var machine = ClientConnectionStateMachine(maxStreams: maxStreams)
        #expect(machine.socketConnected() == true)
        machine.settingsReceived()
        return machine
    }

    @Test("calls wait while connecting, open once ready, and are refused once closed")
    func callsByState() {
        var machine = ClientConnectionStateMachine(maxStreams: 10)
        #expect(machine.state == .connecting && machine.isConnecting && !machine.isReady)
        #expect(machine.callArrived() == .wait)
        #expect(machine.socketConnected() == true)
        #expect(machine.state == .ready && machine.isReady && !machine.isConnecting)
        #expect(machine.callArrived() == .open)
        #expect(machine.close() == true)
        #expect(machine.state == .closed)
        #expect(machine.callArrived() == .refuseClosed)
    }

    @Test("a call reaching a retired, closed connection is refused as never sent (REFUSED_STREAM)")
    func callAfterRetirement() {
        var machine = ready()
        #expect(machine.retire() == true)
        #expect(machine.callArrived() == .open)  // retired but open: a call on its way still opens
        #expect(machine.close() == true)
        #expect(machine.callArrived() == .refuseRetired)
    }

    @Test("close while connecting: the connect that completes afterwards starts nothing")
    func closeWhileConnecting() {
        var machine = ClientConnectionStateMachine(maxStreams: 10)
        #expect(machine.close() == true)
        #expect(!machine.isConnecting)  // the connect timer and a late resolution do nothing
        #expect(machine.socketConnected() == false)
        #expect(machine.state == .closed)
        #expect(!machine.everConnected)
    }

    @Test("closing twice closes once")
    func closeTwice() {
        var machine = ready()
        #expect(machine.close() == true)
        #expect(machine.close() == false)
        #expect(machine.state == .closed)
    }

    @Test("a second writable event after connecting does not start a second session")
    func connectedTwice() {
        var machine = ClientConnectionStateMachine(maxStreams: 10)
        #expect(machine.socketConnected() == true)
        #expect(machine.socketConnected() == false)
    }

    @Test("only the server's SETTINGS count as connected for the reconnect backoff")
    func everConnected() {
        var machine = ClientConnectionStateMachine(maxStreams: 10)
        #expect(machine.socketConnected() == true)
        #expect(!machine.everConnected)  // TCP accepted, but nothing answered yet
        machine.settingsReceived()
        #expect(machine.everConnected)
        #expect(machine.close() == true)
        #expect(machine.everConnected)
    }

    @Test("the connection retires once it has opened its last stream, and only once")
    func retiresAfterMaxStreams() {
        var machine = ready(maxStreams: 3)
        #expect(machine.streamOpened() == false)
        #expect(machine.streamOpened() == false)
        #expect(machine.streamOpened() == true)
        #expect(machine.streamsOpened == 3)
        #expect(machine.retire() == true)
        #expect(machine.retire() == false)  // the grace timer starts once
        #expect(machine.retiring)
    }

    @Test("a retired connection closes after its grace and once its calls have ended, with our GOAWAY")
    func retiredCloses() {
        var machine = ready()
        #expect(machine.retire() == true)
        #expect(machine.outputFlushed(sessionAlive: true, callsOpen: false) == .none)  // grace not over
        machine.retirementGraceEnded()
        #expect(machine.outputFlushed(sessionAlive: true, callsOpen: true) == .none)  // calls still open
        #expect(machine.outputFlushed(sessionAlive: true, callsOpen: false) == .closeRetired)
    }

    @Test("a session the server ended closes the connection, retired or not; nothing once closed")
    func serverEnded() {
        var machine = ready()
        #expect(machine.outputFlushed(sessionAlive: true, callsOpen: false) == .none)
        #expect(machine.outputFlushed(sessionAlive: false, callsOpen: true) == .closeEndedByServer)
        #expect(machine.close() == true)
        #expect(machine.outputFlushed(sessionAlive: false, callsOpen: false) == .none)
    }

    @Test("replaced while connecting with no call waiting closes at once; otherwise it retires")
    func replaced() {
        let connecting = ClientConnectionStateMachine(maxStreams: 10)
        #expect(connecting.replacedClosesAtOnce(callsWaiting: false))
        #expect(!connecting.replacedClosesAtOnce(callsWaiting: true))
        #expect(!ready().replacedClosesAtOnce(callsWaiting: false))
    }

    @Test("keepalive: wait for quiet, ping, close when the ping stays unanswered")
    func keepalive() {
        var machine = ready()
        let interval = Duration.seconds(60)
        #expect(machine.keepaliveTick(interval: interval, quietFor: .seconds(20), callsOpen: true) == .tickAgain(after: .seconds(40)))
        #expect(machine.keepaliveTick(interval: interval, quietFor: .seconds(90), callsOpen: false) == .tickAgain(after: .milliseconds(10)))
        #expect(machine.keepaliveTick(interval: interval, quietFor: .seconds(60), callsOpen: true) == .ping)
        #expect(machine.pingOutstanding)
        #expect(machine.keepaliveTick(interval: interval, quietFor: .seconds(70), callsOpen: true) == .closeUnanswered)
    }

    @Test("keepalive: an answered ping starts the count again; a tick after close does nothing")
    func keepaliveAnswered() {
        var machine = ready()
        let interval = Duration.seconds(1)
        #expect(machine.keepaliveTick(interval: interval, quietFor: .seconds(2), callsOpen: true) == .ping)
        machine.pingAcknowledged()
        #expect(machine.keepaliveTick(interval: interval, quietFor: .seconds(2), callsOpen: true) == .ping)
        #expect(machine.close() == true)
        #expect(machine.keepaliveTick(interval: interval, quietFor: .seconds(2), callsOpen: true) == .none)
    }

    @Test("a liveness check pings once at a time, closes when unanswered, and not after an answer")
    func confirmAlive() {
        var machine = ready()
        #expect(machine.confirmAlive() == true)
        #expect(machine.confirmAlive() == false)  // one check at a time
        #expect(machine.confirmationTimedOut() == true)
        #expect(machine.confirmAlive() == true)
        machine.pingAcknowledged()
        #expect(machine.confirmationTimedOut() == false)  // answered: the timer that fires later does nothing
        var connecting = ClientConnectionStateMachine(maxStreams: 10)
        #expect(connecting.confirmAlive() == false)  // nothing to ping before the connection is made
    }
}
