@testable import gateway
import Testing

/// The breaker's transitions, driven by explicit instants.
@Suite("CircuitBreakerState: closed, open, half-open")
struct CircuitBreakerTests {
    let start = ContinuousClock.now

    @Test("stays closed below the threshold and resets on an answer")
    func staysClosed() {
        var breaker = CircuitBreakerState(threshold: 3)
        breaker.recordFailure(now: start)
        breaker.recordFailure(now: start)
        breaker.recordSuccess()
        breaker.recordFailure(now: start)
        breaker.recordFailure(now: start)
        #expect(breaker.admit(now: start) == .proceed)
        #expect(!breaker.isOpen(now: start))
    }

    @Test("opens after threshold failures in a row and refuses until the cool-down passes")
    func opens() {
        var breaker = CircuitBreakerState(threshold: 3, initialCoolDown: .seconds(1))
        for _ in 0..<3 { breaker.recordFailure(now: start) }
        #expect(breaker.admit(now: start) == .reject)
        #expect(breaker.admit(now: start + .milliseconds(999)) == .reject)
        #expect(breaker.admit(now: start + .seconds(1)) == .probe)
        // Only one probe at a time.
        #expect(breaker.admit(now: start + .seconds(1)) == .reject)
    }

    @Test("a successful probe closes it; a failed one doubles the cool-down up to the cap")
    func probes() {
        var breaker = CircuitBreakerState(threshold: 1, initialCoolDown: .seconds(1), maxCoolDown: .seconds(3))
        breaker.recordFailure(now: start)
        #expect(breaker.admit(now: start + .seconds(1)) == .probe)
        breaker.recordFailure(now: start + .seconds(1))
        #expect(breaker.state == .open(until: start + .seconds(3), coolDown: .seconds(2)))
        #expect(breaker.admit(now: start + .seconds(3)) == .probe)
        breaker.recordFailure(now: start + .seconds(3))
        #expect(breaker.state == .open(until: start + .seconds(6), coolDown: .seconds(3)))
        #expect(breaker.admit(now: start + .seconds(6)) == .probe)
        breaker.recordSuccess()
        #expect(breaker.admit(now: start + .seconds(6)) == .proceed)
    }

    @Test("an abandoned probe gives its turn back")
    func abandonedProbe() {
        var breaker = CircuitBreakerState(threshold: 1, initialCoolDown: .seconds(1))
        breaker.recordFailure(now: start)
        #expect(breaker.admit(now: start + .seconds(2)) == .probe)
        breaker.recordAbandoned(now: start + .seconds(2))
        #expect(breaker.admit(now: start + .seconds(2)) == .probe)
    }

    @Test("a failed health check opens a closed breaker at once")
    func unreachable() {
        var breaker = CircuitBreakerState(threshold: 5, initialCoolDown: .seconds(1))
        breaker.recordUnreachable(now: start)
        #expect(breaker.admit(now: start) == .reject)
        breaker.recordSuccess()
        #expect(breaker.admit(now: start) == .proceed)
    }

    @Test("failed health checks hold the breaker open until the next check, and give up on a probe in flight")
    func unreachableHolds() {
        var breaker = CircuitBreakerState(threshold: 5, initialCoolDown: .seconds(1), maxCoolDown: .seconds(15))
        // Closed: open for the hold (longer than the cool-down), not just the cool-down.
        breaker.recordUnreachable(now: start, holdFor: .seconds(2))
        #expect(breaker.admit(now: start + .milliseconds(1500)) == .reject)
        // Open: each failed check moves the end on; no call probes meanwhile.
        breaker.recordUnreachable(now: start + .milliseconds(1900), holdFor: .seconds(2))
        #expect(breaker.admit(now: start + .milliseconds(3500)) == .reject)
        #expect(breaker.admit(now: start + .milliseconds(3900)) == .probe)
        // Half-open: a failed check while the probe waits opens it again, with twice the cool-down.
        breaker.recordUnreachable(now: start + .seconds(4), holdFor: .zero)
        #expect(breaker.state == .open(until: start + .seconds(6), coolDown: .seconds(2)))
        // The probe's end (out of time) does not reopen the door early.
        breaker.recordAbandoned(now: start + .seconds(5))
        #expect(breaker.admit(now: start + .seconds(5)) == .reject)
    }
}

/// The thread-safe breaker: its lock-free answers while healthy must follow every transition.
@Suite("CircuitBreaker: the shared breaker")
struct SharedCircuitBreakerTests {
    @Test("a healthy breaker admits and is not open; failures below the threshold still admit")
    func healthy() {
        let breaker = CircuitBreaker(CircuitBreakerState(threshold: 2))
        #expect(breaker.admit() == .proceed)
        #expect(!breaker.isOpen)
        breaker.recordFailure()
        #expect(breaker.admit() == .proceed)
        breaker.recordSuccess()  // back to no failures: the next failure alone does not open it
        breaker.recordFailure()
        #expect(breaker.admit() == .proceed)
        #expect(!breaker.isOpen)
    }

    @Test("opening is seen at once by admit and isOpen, and a probe's success makes it healthy again")
    func opensAndRecovers() async throws {
        let breaker = CircuitBreaker(CircuitBreakerState(threshold: 1, initialCoolDown: .milliseconds(20)))
        breaker.recordFailure()
        #expect(breaker.admit() == .reject)
        #expect(breaker.isOpen)
        breaker.recordSuccess()  // an answer of a call admitted before it opened closes it
        #expect(breaker.admit() == .proceed)
        breaker.recordUnreachable()
        #expect(breaker.admit() == .reject)
        try await Task.sleep(for: .milliseconds(40))
        #expect(breaker.admit() == .probe)
        #expect(breaker.admit() == .reject)  // one probe at a time
        breaker.recordSuccess()
        #expect(breaker.admit() == .proceed)
        #expect(!breaker.isOpen)
    }

    @Test("a call answered before the breaker opened and failing after does not close it; one admitted since does")
    func failuresOfEarlierCallsKeepItOpen() {
        let breaker = CircuitBreaker(CircuitBreakerState(threshold: 1, initialCoolDown: .seconds(60)))
        let before = breaker.openCount
        #expect(breaker.admit() == .proceed)
        breaker.recordUnreachable()  // the health checks find the upstream hung
        breaker.recordSuccess(admittedAt: before)  // a watch answered long ago, cut off now
        #expect(breaker.isOpen)
        #expect(breaker.admit() == .reject)
        breaker.recordSuccess(admittedAt: breaker.openCount)  // a call admitted since then
        #expect(!breaker.isOpen)
    }

    @Test("a breaker created open refuses from the first call")
    func createdOpen() {
        var state = CircuitBreakerState(threshold: 1, initialCoolDown: .seconds(60))
        state.recordFailure(now: .now)
        let breaker = CircuitBreaker(state)
        #expect(breaker.admit() == .reject)
        #expect(breaker.isOpen)
    }
}
