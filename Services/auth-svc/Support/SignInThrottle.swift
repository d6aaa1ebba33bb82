internal import Foundation
import Synchronization

/// Sign-in throttling (API.md §3): failures in the last `window` are counted per account and
/// per client address. From the `delayAfter + 1`th failure of an account each attempt is
/// slowed by `delay`; once `refuseAfter` failures are on record, attempts are refused without
/// checking the password and without being counted — so a lock ends `window` after the failure
/// that caused it, whatever a third party keeps sending. An address is refused after
/// `addressLimit` failures. A success, or a completed password reset (``lift(account:)``, or
/// `AuthStore.redeemResetToken` in its own transaction), clears the account's record.
///
/// What is on record is shared by every replica: the failures and the locks live in the
/// database (`AuthStore+SignInThrottle.swift`), so replicas behind a balancer count one set of
/// failures and honour each other's locks. Each attempt reads the record once before its
/// password is checked; a wrong password adds to it in one write; a right one writes only when
/// the account had something on record to clear. Times are wall-clock Unix milliseconds, each
/// replica's own (replicas are expected to keep the same time, as NTP does, to within far
/// less than the window).
///
/// Attempts still being checked count against the limits as failures *to be*: an attempt the
/// limits would refuse were they all to fail waits until enough of them have ended
/// (``attempt(account:address:clearsOnSuccess:giveUpAt:check:)``) and is then decided on what
/// they turned out to be. A burst of guesses is therefore checked no further than the same
/// guesses one after another would be (of 25 wrong ones at once, 10 are checked), and a burst
/// of right passwords all pass: none is refused for what the others might have been. Those
/// attempts are per process by nature (a replica does not see another's in progress): a burst
/// split over N replicas at once may have up to N × `refuseAfter` guesses checked before the
/// failures on record lock the account everywhere.
///
/// Thread-safe: the in-process state lives behind a `Mutex`.
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

    /// How a throttled attempt ended.
    enum Outcome: Sendable, Equatable {
        /// Refused unchecked (`TOO_MANY_ATTEMPTS`).
        case refused
        /// Checked, and wrong: recorded as a failure.
        case failed
        /// Checked, and right.
        case passed
    }

    /// Where the failures and locks are kept, for every replica.
    let store: AuthStore
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
    /// How often an attempt told to ``Decision/wait`` looks whether one it waits for has ended
    /// (in process: no database read) and whether its give-up time has come.
    static let waitInterval: Duration = .milliseconds(20)
    /// How often, at most, this process deletes the failures out of the window and the locks
    /// ended, in the transaction of a failure it records: so the tables hold the failures of
    /// the last `window` plus this, whatever the number of addresses or accounts they came from.
    static let pruneInterval: Duration = .seconds(60)

    /// The attempts of one subject (an account or an address) in this process.
    private struct Activity {
        /// Attempts being checked now.
        var running = 0
        /// Attempts that ended while some decision was being made: a decision whose record was
        /// read before one of them ended may lack its failure, and is made again; an attempt
        /// held back reads the record again once one has ended.
        var ended = 0
        /// Decisions being made; the entry stays while there are any, so `ended` keeps counting.
        var deciding = 0
    }

    /// Who an attempt is counted against in process.
    private enum Subject: Hashable {
        case account(String)
        case address(String)
    }

    /// The in-process state: attempts under way, and when this process last pruned.
    private struct State {
        /// The subjects with attempts running or decisions being made; no entry means neither.
        var activity: [Subject: Activity] = [:]
        /// When this process last pruned the shared records (Unix milliseconds), if it has.
        var lastPrune: Int64?

        /// Applies `change` to the activity of each of `subjects`, then drops entries left idle.
        mutating func update(_ subjects: [Subject], _ change: (inout Activity) -> Void) {
            for subject in subjects {
                var entry = activity[subject] ?? Activity()
                change(&entry)
                activity[subject] = entry.running == 0 && entry.deciding == 0 ? nil : entry
            }
        }

        /// How many attempts of each of `subjects` have ended while decisions were being made.
        func ended(_ subjects: [Subject]) -> [Int] { subjects.map { activity[$0]?.ended ?? 0 } }
    }

    private let state = Mutex(State())

    /// A throttle over `store` with API.md's numbers by default: 15 minutes, delays after 5
    /// failures, refusal after 10, 100 failures per address.
    init(
        store: AuthStore, window: Duration = .seconds(15 * 60), delayAfter: Int = 5, refuseAfter: Int = 10,
        delay: Duration = .seconds(1), addressLimit: Int = 100
    ) {
        self.store = store
        self.window = window
        self.delayAfter = delayAfter
        self.refuseAfter = refuseAfter
        self.delay = delay
        self.addressLimit = addressLimit
    }

    /// The wall-clock time now, in Unix milliseconds: the throttle's times.
    static func currentTime() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

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
        guard let admitted = try await admit(account: account, address: address, giveUpAt: giveUpAt) else {
            return .refused
        }
        let (delay, record) = admitted
        let subjects = Self.subjects(account: account, address: address)
        let outcome: Outcome
        do {
            if delay > .zero { try await Task.sleep(for: delay) }
            if try await check() {
                if clearsOnSuccess && record.hasAccountRecord { try await lift(account: account) }
                outcome = .passed
            } else {
                // Recorded before the attempt stops counting as running: no decision sees it as neither.
                try await recordFailure(account: account, address: address)
                outcome = .failed
            }
        } catch {
            finish(subjects)
            throw error
        }
        finish(subjects)
        return outcome
    }

    /// The decision for an attempt on `account` from `address` at `now`: refused on the
    /// failures on record, held back when the attempts being checked now would take it over a
    /// limit.
    func decide(account: String, address: String, now: Int64 = SignInThrottle.currentTime()) async throws -> Decision {
        let subjects = Self.subjects(account: account, address: address)
        return try await whileDeciding(on: subjects) {
            try await decide(account: account, address: address, now: now, starting: false).decision
        }
    }

    /// Records a wrong password (or unknown account) for `account` from `address` at `now`,
    /// locking the account when it makes `refuseAfter` failures within the window (counting
    /// those recorded by every replica); prunes the shared records when this process has not
    /// for ``pruneInterval``.
    func recordFailure(account: String, address: String, now: Int64 = SignInThrottle.currentTime()) async throws {
        let window = Self.milliseconds(window)
        try await store.recordSignInFailure(
            account: account, address: address, at: now, since: now - window, lockAfter: refuseAfter,
            lockedUntil: now + window, prune: pruneIsDue(now: now))
    }

    /// Clears the record of `account` after a successful sign-in.
    func recordSuccess(account: String) async throws {
        try await lift(account: account)
    }

    /// Clears the record of `account`, and so lifts its lock, on every replica. Attempts being
    /// checked still count until they end.
    func lift(account: String) async throws {
        try await store.clearSignInFailures(account: account)
    }

    /// The decision `record` and the attempts running here call for, at `now`.
    func decision(for record: SignInRecord, runningOnAccount: Int, runningFromAddress: Int, now: Int64) -> Decision {
        if let until = record.lockedUntil, now < until { return .refuse }
        if record.accountFailures >= refuseAfter || record.addressFailures >= addressLimit { return .refuse }
        if record.accountFailures + runningOnAccount >= refuseAfter
            || record.addressFailures + runningFromAddress >= addressLimit
        {
            return .wait
        }
        return .proceed(delay: record.accountFailures + runningOnAccount >= delayAfter ? delay : .zero)
    }

    // MARK: In-process bookkeeping

    /// Decides until the attempt proceeds (then it counts as running, and the caller must
    /// ``finish(_:)`` it) or is refused (nil). Told to ``Decision/wait`` — which only attempts
    /// running here cause — it reads the record again once one of them has ended (whatever
    /// else changed meanwhile, on any replica, is read then), so waiting costs the database
    /// nothing and the give-up time is checked every ``waitInterval`` whatever its pace.
    private func admit(
        account: String, address: String, giveUpAt: ContinuousClock.Instant?
    ) async throws -> (delay: Duration, record: SignInRecord)? {
        let subjects = Self.subjects(account: account, address: address)
        return try await whileDeciding(on: subjects) {
            while true {
                let (decision, record, seen) = try await decide(
                    account: account, address: address, now: Self.currentTime(), starting: true)
                switch decision {
                case .refuse: return nil
                case .proceed(let delay): return (delay, record)
                case .wait:
                    repeat {
                        if let giveUpAt, ContinuousClock.now + Self.waitInterval >= giveUpAt { throw AuthError.overloaded }
                        try await Task.sleep(for: Self.waitInterval)
                    } while state.withLock({ $0.ended(subjects) }) == seen
                }
            }
        }
    }

    /// Runs `body`, which decides on `subjects`, with them marked as being decided on, so
    /// that the attempts on them ending meanwhile are counted (``Activity/ended``).
    private func whileDeciding<Result>(on subjects: [Subject], _ body: () async throws -> Result) async throws -> Result {
        state.withLock { $0.update(subjects) { $0.deciding += 1 } }
        defer { state.withLock { $0.update(subjects) { $0.deciding -= 1 } } }
        return try await body()
    }

    /// Reads the record and decides on it with the attempts running here (inside
    /// ``whileDeciding(on:_:)``); when `starting` and the attempt proceeds, counts it as
    /// running. Returns the decision, the record, and how many attempts on the subjects had
    /// ended when it was read. The record is read outside the lock, so an attempt could end
    /// (its failure committed, and no longer running) between the read and the decision, and be
    /// counted as neither: the record is read again whenever one did.
    private func decide(
        account: String, address: String, now: Int64, starting: Bool
    ) async throws -> (decision: Decision, record: SignInRecord, ended: [Int]) {
        let subjects = Self.subjects(account: account, address: address)
        let since = now - Self.milliseconds(window)
        while true {
            let seen = state.withLock { $0.ended(subjects) }
            let record = try await store.signInRecord(account: account, address: address, since: since)
            let decided: Decision? = state.withLock { state in
                guard state.ended(subjects) == seen else { return nil }
                let decision = self.decision(
                    for: record, runningOnAccount: state.activity[subjects[0]]?.running ?? 0,
                    runningFromAddress: state.activity[subjects[1]]?.running ?? 0, now: now)
                if starting, case .proceed = decision { state.update(subjects) { $0.running += 1 } }
                return decision
            }
            if let decided { return (decided, record, seen) }
        }
    }

    /// Ends a running attempt on `subjects`.
    private func finish(_ subjects: [Subject]) {
        state.withLock { state in
            state.update(subjects) { activity in
                activity.running -= 1
                if activity.deciding > 0 { activity.ended += 1 }
            }
        }
    }

    /// Whether the failure recorded at `now` should prune too: when this process has not
    /// pruned for ``pruneInterval`` (or the clock went back). Claims the prune if so.
    private func pruneIsDue(now: Int64) -> Bool {
        state.withLock { state in
            if let last = state.lastPrune, (last..<last + Self.milliseconds(Self.pruneInterval)).contains(now) {
                return false
            }
            state.lastPrune = now
            return true
        }
    }

    /// The in-process subjects of an attempt: its account, then its address.
    private static func subjects(account: String, address: String) -> [Subject] {
        [.account(account), .address(address)]
    }

    /// `duration` in whole milliseconds.
    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
