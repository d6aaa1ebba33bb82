@testable import auth_svc
import Synchronization
import RPC
import Testing

/// `SignInThrottle` with the README's numbers (15-minute window, delay from the 6th attempt,
/// refusal after 10 failures, 100 per address), driven by explicit instants, over a store on
/// the backend the suites run on (`AuthStore.withFresh`: SQLite in memory, or PostgreSQL).
@Suite("SignInThrottle: delays, locks and the address limit")
struct SignInThrottleTests {
    /// The wall-clock time the test starts at (Unix milliseconds): explicit instants and the
    /// throttle's own clock agree.
    private let start = SignInThrottle.currentTime()
    private let account = "ada@example.com"
    private let address = "203.0.113.7"

    /// The instant `seconds` after the start of the test.
    private func at(_ seconds: Int) -> Int64 { start + Int64(seconds) * 1000 }

    /// Runs `body` with a throttle (`delay` between attempts past the fifth) over a fresh store.
    private func withThrottle(
        delay: Duration = .seconds(1), _ body: (SignInThrottle) async throws -> Void
    ) async throws {
        try await AuthStore.withFresh { store in try await body(SignInThrottle(store: store, delay: delay)) }
    }

    /// Records `count` failures of `account` from `address`, one per second from `first`.
    private func fail(
        _ throttle: SignInThrottle, times count: Int, from first: Int = 0, account: String? = nil, address: String? = nil
    ) async throws {
        for offset in 0..<count {
            try await throttle.recordFailure(
                account: account ?? self.account, address: address ?? self.address, now: at(first + offset))
        }
    }

    @Test("the first five attempts proceed at full speed; the sixth waits one second")
    func delayFromTheSixthAttempt() async throws {
        try await withThrottle { throttle in
            for attempt in 0..<5 {
                #expect(try await throttle.decide(account: account, address: address, now: at(attempt)) == .proceed(delay: .zero))
                try await throttle.recordFailure(account: account, address: address, now: at(attempt))
            }
            #expect(try await throttle.decide(account: account, address: address, now: at(5)) == .proceed(delay: .seconds(1)))
        }
    }

    @Test("after ten failures attempts are refused, and only for that account")
    func refusalAfterTen() async throws {
        try await withThrottle { throttle in
            try await fail(throttle, times: 9)
            #expect(try await throttle.decide(account: account, address: address, now: at(9)) == .proceed(delay: .seconds(1)))
            try await fail(throttle, times: 1, from: 9)
            #expect(try await throttle.decide(account: account, address: address, now: at(10)) == .refuse)
            #expect(try await throttle.decide(account: account, address: "198.51.100.1", now: at(10)) == .refuse)
            #expect(
                try await throttle.decide(account: "grace@example.com", address: address, now: at(10)) == .proceed(delay: .zero))
        }
    }

    @Test("refused attempts are not counted: the lock ends fifteen minutes after the tenth failure")
    func lockEndsAfterTheWindow() async throws {
        try await withThrottle { throttle in
            let tenth = 9
            // Ten failures in quick succession, all at the tenth's instant.
            for _ in 0..<10 { try await throttle.recordFailure(account: account, address: address, now: at(tenth)) }
            // A third party keeps trying during the lock; the handler records nothing for refusals.
            for second in stride(from: tenth + 1, to: tenth + 900, by: 60) {
                #expect(
                    try await throttle.decide(account: account, address: "192.0.2.\(second % 250)", now: at(second)) == .refuse)
            }
            #expect(try await throttle.decide(account: account, address: address, now: at(tenth + 899)) == .refuse)
            #expect(try await throttle.decide(account: account, address: address, now: at(tenth + 900)) == .proceed(delay: .zero))
        }
    }

    @Test("failures spread over the window still lock the account for fifteen minutes after the tenth")
    func spreadFailuresLockForTheWholeWindow() async throws {
        try await withThrottle { throttle in
            // Ten failures a minute apart: the tenth is at 540 s, well inside the first one's window.
            for minute in 0..<10 {
                try await throttle.recordFailure(account: account, address: address, now: at(minute * 60))
            }
            #expect(try await throttle.decide(account: account, address: address, now: at(541)) == .refuse)
            // README: "the lock ends 15 minutes after the 10th failure" — so still locked 10 minutes on.
            #expect(try await throttle.decide(account: account, address: address, now: at(540 + 600)) == .refuse)
            #expect(try await throttle.decide(account: account, address: address, now: at(540 + 900)) != .refuse)
        }
    }

    @Test("a successful sign-in clears the account's failures")
    func successClears() async throws {
        try await withThrottle { throttle in
            try await fail(throttle, times: 7)
            #expect(try await throttle.decide(account: account, address: address, now: at(7)) == .proceed(delay: .seconds(1)))
            try await throttle.recordSuccess(account: account)
            #expect(try await throttle.decide(account: account, address: address, now: at(8)) == .proceed(delay: .zero))
        }
    }

    @Test("an address is refused after 100 failures, whatever accounts it tried")
    func addressLimit() async throws {
        try await withThrottle { throttle in
            for index in 0..<99 {
                try await throttle.recordFailure(account: "user\(index)@example.com", address: address, now: at(index % 60))
            }
            #expect(try await throttle.decide(account: "new@example.com", address: address, now: at(60)) == .proceed(delay: .zero))
            try await throttle.recordFailure(account: "user99@example.com", address: address, now: at(60))
            #expect(try await throttle.decide(account: "new@example.com", address: address, now: at(61)) == .refuse)
            #expect(
                try await throttle.decide(account: "new@example.com", address: "198.51.100.1", now: at(61)) == .proceed(delay: .zero))
            // The oldest failures leave the window 15 minutes later and the address may try again.
            #expect(try await throttle.decide(account: "new@example.com", address: address, now: at(900)) == .proceed(delay: .zero))
        }
    }

    @Test("concurrent attempts count while they are checked: of 25 wrong ones at once, 10 are checked and 15 refused")
    func concurrentAttempts() async throws {
        try await withThrottle(delay: .milliseconds(1)) { throttle in
            let gate = AsyncGate()
            let checking = Counter()
            let outcomes = try await withThrowingTaskGroup(of: SignInThrottle.Outcome.self) { group in
                for _ in 0..<25 {
                    group.addTask {
                        try await throttle.attempt(account: account, address: address) {
                            // Every check waits until ten are running at once.
                            if checking.increment() == 10 { await gate.open() }
                            await gate.wait()
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [SignInThrottle.Outcome]()) { $0.append($1) }
            }
            #expect(checking.value == 10, "only ten guesses are checked")
            #expect(outcomes.filter { $0 == .refused }.count == 15)
            #expect(outcomes.filter { $0 == .failed }.count == 10)
            // The ten failures lock the account; nothing is left running.
            #expect(try await throttle.decide(account: account, address: address) == .refuse)
            #expect(try await throttle.decide(account: "other@example.com", address: "198.51.100.1") == .proceed(delay: .zero))
        }
    }

    @Test("right passwords checked at once all pass, however many: attempts in progress never refuse them")
    func concurrentRightPasswords() async throws {
        try await withThrottle(delay: .milliseconds(1)) { throttle in
            let gate = AsyncGate()
            let checking = Counter()
            let outcomes = try await withThrowingTaskGroup(of: SignInThrottle.Outcome.self) { group in
                for _ in 0..<25 {
                    group.addTask {
                        try await throttle.attempt(account: account, address: address) {
                            if checking.increment() == 10 { await gate.open() }
                            await gate.wait()
                            return true
                        }
                    }
                }
                return try await group.reduce(into: [SignInThrottle.Outcome]()) { $0.append($1) }
            }
            #expect(outcomes == Array(repeating: .passed, count: 25))
            #expect(try await throttle.decide(account: account, address: address) == .proceed(delay: .zero))
        }
    }

    @Test("an attempt held back by running ones is refused when they fail, as it would be after them")
    func heldBackThenRefused() async throws {
        try await withThrottle(delay: .milliseconds(1)) { throttle in
            try await fail(throttle, times: 9, from: -10)
            let gate = AsyncGate()
            let first = Task {
                try await throttle.attempt(account: account, address: address) {
                    await gate.wait()
                    return false
                }
            }
            while try await throttle.decide(account: account, address: address) != .wait { await Task.yield() }
            let second = Task {
                try await throttle.attempt(account: account, address: address) { true }
            }
            try await Task.sleep(for: .milliseconds(100))
            await gate.open()
            #expect(try await first.value == .failed)
            #expect(try await second.value == .refused, "the tenth failure locked the account")
        }
    }

    @Test("an attempt held back past its caller's deadline is answered OVERLOADED in time, not left to time out")
    func heldBackGivesUp() async throws {
        try await withThrottle(delay: .milliseconds(1)) { throttle in
            try await fail(throttle, times: 9, from: -10)
            let gate = AsyncGate()
            let first = Task {
                try await throttle.attempt(account: account, address: address) {
                    await gate.wait()
                    return false
                }
            }
            while try await throttle.decide(account: account, address: address) != .wait { await Task.yield() }
            // The running attempt ends after 2 s whatever happens, so that a wait past the deadline
            // shows as a failure here rather than a hang.
            let opener = Task {
                try await Task.sleep(for: .seconds(2))
                await gate.open()
            }
            let started = ContinuousClock.now
            let outcome = await Task {
                try await throttle.attempt(account: account, address: address, giveUpAt: .now + .milliseconds(150)) { true }
            }.result
            let waited = ContinuousClock.now - started
            opener.cancel()
            await gate.open()
            #expect(try await first.value == .failed)
            switch outcome {
            case .success(let result): Issue.record("held back past its deadline, it ended \(result)")
            case .failure(let error): #expect(RPCError(converting: error).reason == "OVERLOADED")
            }
            #expect(waited < .seconds(1), "it waited \(waited)")
        }
    }

    @Test("a completed reset lifts the lock at once")
    func liftEndsTheLock() async throws {
        try await withThrottle { throttle in
            try await fail(throttle, times: 10)
            #expect(try await throttle.decide(account: account, address: address, now: at(11)) == .refuse)
            try await throttle.lift(account: account)
            #expect(try await throttle.decide(account: account, address: address, now: at(12)) == .proceed(delay: .zero))
            #expect(try await throttle.decide(account: account, address: address, now: at(20)) == .proceed(delay: .zero))
        }
    }

    @Test("the shared records stay bounded: failures from ever new addresses and accounts are deleted once out of the window")
    func recordsStayBounded() async throws {
        try await withThrottle { throttle in
            let perRound = 25
            // Each round a new crowd of addresses fails on new accounts, every one locked; rounds
            // are a window and a prune interval apart, so each round's first failure prunes.
            let roundLength = 900 + Int(SignInThrottle.pruneInterval.components.seconds)
            for round in 0..<4 {
                for index in 0..<perRound {
                    let guesser = "198.51.\(round).\(index)"
                    let target = "round\(round)-user\(index)@example.com"
                    for _ in 0..<10 {
                        try await throttle.recordFailure(account: target, address: guesser, now: at(round * roundLength + index))
                    }
                }
                let counts = try await throttle.store.signInRowCounts()
                // Two rows a failure (account and address), one lock an account: this round's only.
                #expect(counts.failures == Int64(perRound * 10 * 2), "round \(round): \(counts)")
                #expect(counts.locks == Int64(perRound), "round \(round): \(counts)")
            }
            // What was pruned was out of the window anyway: the latest round's accounts are still locked.
            #expect(
                try await throttle.decide(account: "round3-user0@example.com", address: address, now: at(3 * roundLength + 60))
                    == .refuse)
        }
    }
}

/// A thread-safe count.
private final class Counter: Sendable {
    private let count = Mutex(0)

    /// Adds one; returns the new count.
    func increment() -> Int { count.withLock { $0 += 1; return $0 } }

    /// The count now.
    var value: Int { count.withLock { $0 } }
}

/// Suspends callers of `wait()` until `open()`.
private actor AsyncGate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}
