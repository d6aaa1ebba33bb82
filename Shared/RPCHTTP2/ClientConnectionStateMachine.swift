/// The life cycle of a ``ClientConnection``, as a value: connecting, ready, closed — with
/// retirement (the connection takes no new calls and closes once its calls have ended) and the
/// keepalive PINGs on the way. Each event returns what the connection must do; the connection
/// does it (sockets, timers, calls), so every transition, the odd ones included, is testable
/// without a socket. Loop only, as the connection that owns it.
struct ClientConnectionStateMachine {
    /// Where the connection is in its life.
    enum State: Equatable {
        /// The address is being resolved or the TCP connect is under way; calls wait.
        case connecting
        /// Connected: calls open streams.
        case ready
        /// Closed for good; calls that still come are refused.
        case closed
    }

    /// What to do with a call that reaches the connection on its loop.
    enum CallAction: Equatable {
        /// Keep it until the connection is made.
        case wait
        /// Open its stream now.
        case open
        /// Refuse it `UNAVAILABLE`/`REFUSED_STREAM`: it came on its way before the connection
        /// was retired, was never sent, and may be tried again on the one that took over.
        case refuseRetired
        /// Refuse it `UNAVAILABLE`/`UPSTREAM_UNAVAILABLE`: the connection is gone.
        case refuseClosed
    }

    /// What to do once the socket's output has been flushed.
    enum FlushAction: Equatable {
        /// Nothing: the connection carries on.
        case none
        /// Close: the server ended the session (after its GOAWAY, once our calls finished).
        case closeEndedByServer
        /// Send our GOAWAY and close: retired, its grace over and its calls all ended.
        case closeRetired
    }

    /// What a keepalive tick asks for.
    enum KeepaliveAction: Equatable {
        /// Close: the PING of the previous tick is still unanswered.
        case closeUnanswered
        /// Send a PING and tick again after the keepalive timeout.
        case ping
        /// Tick again after `delay`: calls are quiet for less than the interval, or none is open.
        case tickAgain(after: Duration)
        /// Nothing: the connection is not ready (the tick outlived it).
        case none
    }

    /// Where the connection is in its life.
    private(set) var state = State.connecting
    /// Whether the server's SETTINGS arrived: only then does the client's reconnect backoff start
    /// over when the connection closes. A TCP connect alone is not enough — something that
    /// accepts and drops every connection would otherwise be reconnected to without backoff.
    private(set) var everConnected = false
    /// Whether the connection takes no new calls and closes once its calls have finished.
    private(set) var retiring = false
    /// Whether a retired connection may close once its calls have ended: not until a moment
    /// after it was retired (``ClientConnection/retirementGrace``), so that a call that took it
    /// from its slot just before the client replaced it still opens its stream here.
    private(set) var retirementSettled = false
    /// Streams opened on this connection.
    private(set) var streamsOpened = 0
    /// Whether the keepalive PING is unanswered.
    private(set) var pingOutstanding = false
    /// Whether the PING of ``ClientConnection/confirmAlive(within:)`` is unanswered.
    private(set) var confirming = false

    /// Streams after which the connection retires (``ClientConfiguration/maxStreamsPerConnection``).
    let maxStreams: Int

    /// A connection about to connect, retiring after `maxStreams` streams.
    init(maxStreams: Int) {
        self.maxStreams = maxStreams
    }

    /// Whether calls may open streams and frames may be sent.
    var isReady: Bool { state == .ready }

    // MARK: Connecting

    /// The socket became writable: connected. Returns whether the session is to start (false
    /// when the connection closed meanwhile, or connected already).
    mutating func socketConnected() -> Bool {
        guard state == .connecting else { return false }
        state = .ready
        return true
    }

    /// The server's SETTINGS arrived.
    mutating func settingsReceived() {
        everConnected = true
    }

    /// Whether a connect step (the connect timer, a resolved address) still applies: false once
    /// the connection is made or closed.
    var isConnecting: Bool { state == .connecting }

    // MARK: Calls

    /// A call reached the connection on its loop.
    func callArrived() -> CallAction {
        switch state {
        case .connecting: .wait
        case .ready: .open
        case .closed where retiring: .refuseRetired
        case .closed: .refuseClosed
        }
    }

    /// A call's stream opened. Returns whether the connection must now retire: it has opened
    /// as many streams as it may.
    mutating func streamOpened() -> Bool {
        streamsOpened += 1
        return streamsOpened >= maxStreams
    }

    // MARK: Retiring

    /// Takes the connection out of use for new calls. Returns whether this retired it (the
    /// grace timer is to start); false when it was retiring already.
    mutating func retire() -> Bool {
        guard !retiring else { return false }
        retiring = true
        return true
    }

    /// The client replaced the connection. Returns whether to close it at once — still
    /// connecting with no call waiting for it, so it is not accepted among the new ones — rather
    /// than retire it.
    func replacedClosesAtOnce(callsWaiting: Bool) -> Bool {
        state == .connecting && !callsWaiting
    }

    /// The retirement grace has passed: the connection may close once its calls have ended.
    mutating func retirementGraceEnded() {
        retirementSettled = true
    }

    /// The socket's output was flushed while ready: whether the connection is to close now.
    /// `sessionAlive`: nghttp2 still wants to read or write; `callsOpen`: calls are open or
    /// waiting.
    func outputFlushed(sessionAlive: Bool, callsOpen: Bool) -> FlushAction {
        guard state == .ready else { return .none }
        if !sessionAlive { return .closeEndedByServer }
        if retiring && retirementSettled && !callsOpen { return .closeRetired }
        return .none
    }

    // MARK: Keepalive

    /// The keepalive timer fired, calls having been quiet for `quietFor`.
    mutating func keepaliveTick(interval: Duration, quietFor: Duration, callsOpen: Bool) -> KeepaliveAction {
        guard state == .ready else { return .none }
        if pingOutstanding { return .closeUnanswered }
        guard callsOpen, quietFor >= interval else {
            return .tickAgain(after: max(interval - quietFor, .milliseconds(10)))
        }
        pingOutstanding = true
        return .ping
    }

    /// Starts a liveness check (``ClientConnection/confirmAlive(within:)``). Returns whether a
    /// PING is to be sent: false when not ready, or a check is under way.
    mutating func confirmAlive() -> Bool {
        guard state == .ready, !confirming else { return false }
        confirming = true
        return true
    }

    /// The liveness check's time is up. Returns whether the connection is to close: its PING
    /// is still unanswered.
    mutating func confirmationTimedOut() -> Bool {
        guard confirming else { return false }
        confirming = false
        return true
    }

    /// A PING was acknowledged: the keepalive and the liveness check are both answered.
    mutating func pingAcknowledged() {
        pingOutstanding = false
        confirming = false
    }

    // MARK: Closing

    /// The connection is to close. Returns whether it closes now (false: it had closed
    /// already, and nothing is to be done twice).
    mutating func close() -> Bool {
        guard state != .closed else { return false }
        state = .closed
        return true
    }
}
