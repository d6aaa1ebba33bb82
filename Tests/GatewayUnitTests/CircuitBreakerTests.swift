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
}
