import Synchronization

/// The life cycle of one upstream's circuit breaker, as a value with event methods (no I/O,
/// no clock of its own), so every transition is testable.
///
/// - closed: calls go through; `threshold` transport failures in a row open it.
/// - open: calls are refused at once until the cool-down passes; then one call may probe.
/// - half-open: the probe is in flight and every other call is refused; the probe's success
///   (for a stream, its response headers: a watch may run for hours) closes the breaker, its
///   failure opens it again with twice the cool-down (up to a cap).
///
/// Only failures to reach the upstream count (no connection, connection lost before any
/// answer); an answer with an error status is the upstream working.
struct CircuitBreakerState: Sendable {
    enum State: Equatable, Sendable {
        case closed(failures: Int)
        case open(until: ContinuousClock.Instant, coolDown: Duration)
        case halfOpen(coolDown: Duration)
    }

    /// What to do with a call about to start.
    enum Admission: Equatable, Sendable {
        /// Go ahead.
        case proceed
        /// Go ahead as the one probe of a half-open breaker.
        case probe
        /// Refuse it: the upstream is known to be down.
        case reject
    }

    private(set) var state: State = .closed(failures: 0)
    /// Transport failures in a row that open a closed breaker.
    let threshold: Int
    /// The first cool-down after opening.
    let initialCoolDown: Duration
    /// The longest cool-down.
    let maxCoolDown: Duration

    init(threshold: Int = 3, initialCoolDown: Duration = .seconds(1), maxCoolDown: Duration = .seconds(15)) {
        self.threshold = max(1, threshold)
        self.initialCoolDown = initialCoolDown
        self.maxCoolDown = max(initialCoolDown, maxCoolDown)
    }

    /// Whether a call may start now.
    mutating func admit(now: ContinuousClock.Instant) -> Admission {
        switch state {
        case .closed:
            return .proceed
        case .open(let until, let coolDown):
            guard now >= until else { return .reject }
            state = .halfOpen(coolDown: coolDown)
            return .probe
        case .halfOpen:
            return .reject
        }
    }

    /// The upstream answered (any status).
    mutating func recordSuccess() {
        state = .closed(failures: 0)
    }

    /// A call could not reach the upstream.
    mutating func recordFailure(now: ContinuousClock.Instant) {
        switch state {
        case .closed(let failures):
            if failures + 1 >= threshold {
                state = .open(until: now + initialCoolDown, coolDown: initialCoolDown)
            } else {
                state = .closed(failures: failures + 1)
            }
        case .halfOpen(let coolDown):
            let next = min(coolDown * 2, maxCoolDown)
            state = .open(until: now + next, coolDown: next)
        case .open:
            break
        }
    }

    /// A call ended without an answer for a reason of its own (cancelled, out of time): a
    /// probe gives its turn back, so the next call probes instead.
    mutating func recordAbandoned(now: ContinuousClock.Instant) {
        if case .halfOpen(let coolDown) = state { state = .open(until: now, coolDown: coolDown) }
    }

    /// A health check found the upstream unreachable: open at once, without waiting for
    /// callers to fail `threshold` times, and stay open for at least `holdFor` — until the next
    /// check can say otherwise — so that no call probes an upstream the checks find down (a
    /// probe of a hung one would wait out its whole deadline). A probe already in flight is
    /// given up on: the breaker opens with twice its cool-down.
    mutating func recordUnreachable(now: ContinuousClock.Instant, holdFor: Duration = .zero) {
        switch state {
        case .closed:
            state = .open(until: now + max(initialCoolDown, holdFor), coolDown: initialCoolDown)
        case .halfOpen(let coolDown):
            let next = min(coolDown * 2, maxCoolDown)
            state = .open(until: now + max(next, holdFor), coolDown: next)
        case .open(let until, let coolDown):
            state = .open(until: max(until, now + holdFor), coolDown: coolDown)
        }
    }

    /// Whether calls are being refused now.
    func isOpen(now: ContinuousClock.Instant) -> Bool {
        switch state {
        case .closed: false
        case .open(let until, _): now < until
        case .halfOpen: true
        }
    }
}

/// A thread-safe circuit breaker for one upstream: ``CircuitBreakerState`` behind a `Mutex`.
///
/// While the upstream is healthy (closed, no failures) — nearly always — admitting a call and
/// recording its success read one atomic flag instead of taking the lock every call.
final class CircuitBreaker: Sendable {
    private let state: Mutex<CircuitBreakerState>
    /// Whether `state` is closed with no failures counted; written under the lock.
    private let healthy: Atomic<Bool>
    /// How many times the breaker has opened; written under the lock.
    private let openings = Atomic<Int>(0)

    /// A closed breaker with the given thresholds.
    init(_ initial: CircuitBreakerState = CircuitBreakerState()) {
        state = Mutex(initial)
        healthy = Atomic(initial.state == .closed(failures: 0))
    }

    /// Whether a call may start now.
    func admit() -> CircuitBreakerState.Admission {
        if healthy.load(ordering: .acquiring) { return .proceed }
        return update { $0.admit(now: .now) }
    }

    /// The upstream answered.
    func recordSuccess() {
        if healthy.load(ordering: .acquiring) { return }
        update { $0.recordSuccess() }
    }

    /// How many times the breaker has opened so far: a call notes it before it is admitted
    /// (``recordSuccess(admittedAt:)``).
    var openCount: Int { openings.load(ordering: .acquiring) }

    /// A call admitted when ``openCount`` was `count` failed after the upstream had answered
    /// it: that closes the breaker only if the breaker has not opened since. A call answered
    /// before an outage was noticed — a watch open for an hour — and cut off by it says nothing
    /// of the upstream now: it must not close the breaker the outage opened.
    func recordSuccess(admittedAt count: Int) {
        if healthy.load(ordering: .acquiring) { return }
        update { state in
            if openings.load(ordering: .relaxed) == count { state.recordSuccess() }
        }
    }

    /// A call could not reach the upstream.
    func recordFailure() {
        update { $0.recordFailure(now: .now) }
    }

    /// A call ended without an answer for a reason of its own.
    func recordAbandoned() {
        update { $0.recordAbandoned(now: .now) }
    }

    /// A health check could not reach the upstream; calls are refused for at least `holdFor`.
    func recordUnreachable(holdFor: Duration = .zero) {
        update { $0.recordUnreachable(now: .now, holdFor: holdFor) }
    }

    /// Whether the breaker is closed (calls go through, whatever failures it has counted);
    /// false while open or half-open, cool-down passed or not.
    var isClosed: Bool {
        if healthy.load(ordering: .acquiring) { return true }
        return state.withLock { if case .closed = $0.state { true } else { false } }
    }

    /// Whether calls are refused now; a retry is pointless then.
    var isOpen: Bool {
        if healthy.load(ordering: .acquiring) { return false }
        return state.withLock { $0.isOpen(now: .now) }
    }

    /// Changes the state under the lock, keeping `healthy` in step.
    private func update<Result>(_ change: (inout CircuitBreakerState) -> Result) -> Result {
        state.withLock { state in
            let wasOpen = if case .open = state.state { true } else { false }
            let result = change(&state)
            if case .open = state.state, !wasOpen { openings.add(1, ordering: .releasing) }
            healthy.store(state.state == .closed(failures: 0), ordering: .releasing)
            return result
        }
    }
}
