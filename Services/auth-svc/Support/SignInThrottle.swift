import Synchronization

/// Sign-in throttling (API.md §3): failures in the last `window` are counted per account and
/// per client address. From the `delayAfter + 1`th failure of an account each attempt is
/// slowed by `delay`; once `refuseAfter` failures are on record, attempts are refused without
/// checking the password and without being counted — so a lock ends `window` after the failure
/// that caused it, whatever a third party keeps sending. An address is refused after
/// `addressLimit` failures. A success, or a completed password reset (``lift(account:)``),
/// clears the account's record.
///
/// Attempts still being checked count against the limits as failures *to be*: an attempt the
/// limits would refuse were they all to fail waits until enough of them have ended
/// (``attempt(account:address:clearsOnSuccess:check:)``) and is then decided on what they
/// turned out to be. A burst of guesses is therefore checked no further than the same guesses
/// one after another would be (of 25 wrong ones at once, 10 are checked), and a burst of
/// right passwords all pass: none is refused for what the others might have been.
///
/// Thread-safe: the records live behind a `Mutex`; old ones are swept as time passes.
final class SignInThrottle: Sendable {
    /// What to do with a sign-in attempt.
    enum Decision: Sendable, Equatable {
        /// Check the password, after waiting `delay` (zero when the account is in good standing).
        case proceed(delay: Duration)
        /// Refuse with `TOO_MANY_ATTEMPTS`.
        case refuse
        /// The limits would refuse it if the attempts being checked now all fail, and would not
        /// otherwise: decide again once some of them have ended.
        case wait
    }

    /// The period failures are counted over (15 minutes).
    let window: Duration
    /// Failures of an account answered at full speed.
    let delayAfter: Int
    /// Failures of an account after which attempts are refused.
    let refuseAfter: Int
    /// How long each attempt beyond `delayAfter` waits.
    let delay: Duration
    /// Failures from one address after which its attempts are refused.
    let addressLimit: Int
    /// How often an attempt told to ``Decision/wait`` looks again.
    static let waitInterval: Duration = .milliseconds(20)

    private struct State {
        var accounts: [String: [ContinuousClock.Instant]] = [:]
        /// Accounts refused until the given time: `window` after the failure that locked them.
        var lockedUntil: [String: ContinuousClock.Instant] = [:]
        var addresses: [String: [ContinuousClock.Instant]] = [:]
        /// Attempts being checked now, by account and by address.
        var runningOn: [String: Int] = [:]
        var runningFrom: [String: Int] = [:]
        var lastSweep = ContinuousClock.now
    }

    /// How a throttled attempt ended.
    enum Outcome: Sendable, Equatable {
        /// Refused unchecked (`TOO_MANY_ATTEMPTS`).
        case refused
        /// Checked, and wrong: recorded as a failure.
        case failed
        /// Checked, and right.
        case passed
    }

    private let state = Mutex(State())

    /// A throttle with API.md's numbers by default: 15 minutes, delays after 5 failures.
    init(
        window: Duration = .seconds(15 * 60), delayAfter: Int = 5, refuseAfter: Int = 10, delay: Duration = .seconds(1),
        addressLimit: Int = 100
    ) {
        self.window = window
        self.delayAfter = delayAfter
        self.refuseAfter = refuseAfter
        self.delay = delay
        self.addressLimit = addressLimit
    }

    /// One password check on `account` from `address`, throttled: refused unchecked, slowed or
    /// held back as ``decide(account:address:now:)`` says, and counted from its start until it
    /// ends, so that attempts running at once see each other. An attempt held back (``Decision/wait``)
    /// waits until the attempts ahead of it have ended, so it is refused only for failures on
    /// record, never for attempts that turn out right; it waits until `giveUpAt` at the latest
    /// (its caller's deadline, less a margin for the answer to get back), then is answered
    /// `RESOURCE_EXHAUSTED`/`OVERLOADED` — in time, not as a deadline run out. A wrong password
    /// is recorded as a failure; a right one clears the account's record when `clearsOnSuccess`.
    func attempt(
        account: String, address: String, clearsOnSuccess: Bool = true, giveUpAt: ContinuousClock.Instant? = nil,
        check: () async throws -> Bool
    ) async throws -> Outcome {
        var delay = Duration.zero
        decision: while true {
            let decision = state.withLock { state in
                let decision = decide(account: account, address: address, now: .now, state: &state)
                if case .proceed = decision {
                    state.runningOn[account, default: 0] += 1
                    state.runningFrom[address, default: 0] += 1
                }
                return decision
            }
            switch decision {
            case .refuse: return .refused
            case .wait:
                if let giveUpAt, ContinuousClock.now + Self.waitInterval >= giveUpAt { throw AuthError.overloaded }
                try await Task.sleep(for: Self.waitInterval)
            case .proceed(let wait):
                delay = wait
                break decision
            }
        }
        defer {
            state.withLock { state in
                state.runningOn[account] = state.runningOn[account].flatMap { $0 > 1 ? $0 - 1 : nil }
                state.runningFrom[address] = state.runningFrom[address].flatMap { $0 > 1 ? $0 - 1 : nil }
            }
        }
        if delay > .zero { try await Task.sleep(for: delay) }
        guard try await check() else {
            recordFailure(account: account, address: address)
            return .failed
        }
        if clearsOnSuccess { recordSuccess(account: account) }
        return .passed
    }

    /// The decision for an attempt on `account` from `address`: refused on the failures on
    /// record, held back when the attempts being checked now would take it over a limit.
    func decide(account: String, address: String, now: ContinuousClock.Instant = .now) -> Decision {
        state.withLock { state in decide(account: account, address: address, now: now, state: &state) }
    }

    private func decide(account: String, address: String, now: ContinuousClock.Instant, state: inout State) -> Decision {
        if now - state.lastSweep > window { sweep(&state, now: now) }
        if let until = state.lockedUntil[account], now < until { return .refuse }
        let accountFailures = recent(state.accounts[account], now: now)
        let addressFailures = recent(state.addresses[address], now: now)
        if accountFailures >= refuseAfter || addressFailures >= addressLimit { return .refuse }
        let accountRunning = state.runningOn[account] ?? 0
        if accountFailures + accountRunning >= refuseAfter
            || addressFailures + (state.runningFrom[address] ?? 0) >= addressLimit
        {
            return .wait
        }
        return .proceed(delay: accountFailures + accountRunning >= delayAfter ? delay : .zero)
    }

    /// Records a wrong password (or unknown account) for `account` from `address`.
    func recordFailure(account: String, address: String, now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            state.accounts[account, default: []].append(now)
            state.addresses[address, default: []].append(now)
            state.accounts[account] = state.accounts[account]?.suffix(refuseAfter).map { $0 }
            if recent(state.accounts[account], now: now) >= refuseAfter {
                state.lockedUntil[account] = now + window
            }
            state.addresses[address] = state.addresses[address]?.suffix(addressLimit).map { $0 }
        }
    }

    /// Clears the record of `account` after a successful sign-in.
    func recordSuccess(account: String) {
        lift(account: account)
    }

    /// Clears the record of `account`, and so lifts its lock: after a successful sign-in, or a
    /// completed password reset (whoever used the link holds the mailbox, and the password
    /// guessed at is gone). Attempts being checked still count until they end.
    func lift(account: String) {
        state.withLock { state in
            state.accounts[account] = nil
            state.lockedUntil[account] = nil
        }
    }

    private func recent(_ failures: [ContinuousClock.Instant]?, now: ContinuousClock.Instant) -> Int {
        failures?.reduce(0) { count, time in now - time < window ? count + 1 : count } ?? 0
    }

    private func sweep(_ state: inout State, now: ContinuousClock.Instant) {
        state.accounts = state.accounts.filter { _, failures in failures.contains { now - $0 < window } }
        state.addresses = state.addresses.filter { _, failures in failures.contains { now - $0 < window } }
        state.lockedUntil = state.lockedUntil.filter { _, until in now < until }
        state.lastSweep = now
    }
}
