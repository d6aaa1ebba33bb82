/// The life cycle of a ``ServerConnection``, as a value: open, draining (a graceful shutdown's
/// GOAWAYs on their way), closed — with the housekeeping that ends a connection (idle, a
/// keepalive PING unanswered, a peer that takes no data). Each event returns what the
/// connection must do; the connection does it, so every transition is testable without a
/// socket. Loop only, as the connection that owns it.
struct ServerConnectionStateMachine {
    /// Where the connection is in its life.
    enum State: Equatable {
        /// Serving calls.
        case open
        /// Shutting down gracefully: the GOAWAY notice is out, the final GOAWAY follows.
        case draining
        /// Closed for good.
        case closed
    }

    /// What a housekeeping round asks for.
    enum HousekeepingAction: Equatable {
        /// Send GOAWAY and close: no stream for the whole idle timeout.
        case closeIdle
        /// Close: our keepalive PING went unanswered for a whole interval.
        case closeUnanswered
        /// Close: the socket took no data for the send timeout.
        case closeSendTimeout
        /// Carry on (resetting streams whose answers stalled), sending a keepalive PING first
        /// when `ping`.
        case carryOn(ping: Bool)
        /// Nothing: the connection has closed (the timer outlived it).
        case none
    }

    /// The timings housekeeping applies, in monotonic nanoseconds.
    struct Timeouts: Equatable {
        /// No stream for this long closes the connection.
        var idle: UInt64
        /// Quiet for this long sends a PING; a PING unanswered this long closes.
        var keepalive: UInt64
        /// A socket that takes no data for this long closes.
        var send: UInt64
    }

    /// Where the connection is in its life.
    private(set) var state = State.open
    /// When (monotonic ns) a stream last opened or closed: idle time is counted from it, not
    /// from the socket's traffic, so a peer that keeps answering PINGs is still idle.
    private(set) var lastStreamActivity: UInt64
    /// When (monotonic ns) our keepalive PING went out, while it is unanswered.
    private(set) var pingSentAt: UInt64?

    /// An open connection, accepted at `now`.
    init(now: UInt64) {
        lastStreamActivity = now
    }

    /// Whether the connection has closed.
    var isClosed: Bool { state == .closed }

    /// Whether a graceful shutdown has begun (and the connection has not closed yet).
    var isDraining: Bool { state == .draining }

    /// A stream opened or closed at `now`.
    mutating func streamActivity(at now: UInt64) {
        lastStreamActivity = now
    }

    /// A graceful shutdown begins. Returns whether to send the GOAWAY notice and arm the final
    /// GOAWAY: false when draining or closed already.
    mutating func beginDrain() -> Bool {
        guard state == .open else { return false }
        state = .draining
        return true
    }

    /// The final GOAWAY is due. Returns whether to send it: false once closed.
    func finalGoAwayDue() -> Bool {
        state != .closed
    }

    /// A stream closed. Returns whether to flush soon so that a draining connection ends once
    /// its last stream has.
    func streamClosed(streamsLeft: Int) -> Bool {
        state == .draining && streamsLeft == 0
    }

    /// Our keepalive PING was answered.
    mutating func pingAcknowledged() {
        pingSentAt = nil
    }

    /// The housekeeping timer fired at `now`. `streamsOpen`: streams are open; `lastRead`: when
    /// bytes last arrived; `outputStalledSince`: since when output waits with none of it taken.
    mutating func housekeeping(
        now: UInt64, streamsOpen: Bool, lastRead: UInt64, outputStalledSince: UInt64?, timeouts: Timeouts
    ) -> HousekeepingAction {
        guard state != .closed else { return .none }
        if !streamsOpen && now &- lastStreamActivity >= timeouts.idle { return .closeIdle }
        if let sentAt = pingSentAt, now &- sentAt >= timeouts.keepalive { return .closeUnanswered }
        if let since = outputStalledSince, now &- since >= timeouts.send { return .closeSendTimeout }
        guard pingSentAt == nil && now &- lastRead >= timeouts.keepalive else { return .carryOn(ping: false) }
        pingSentAt = now
        return .carryOn(ping: true)
    }

    /// The connection is to close. Returns whether it closes now (false: it had closed already).
    mutating func close() -> Bool {
        guard state != .closed else { return false }
        state = .closed
        return true
    }
}
