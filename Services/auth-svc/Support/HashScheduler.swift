internal import Foundation
internal import RPC
internal import ServiceKit
internal import Synchronization

/// Admits password hashing to its pool fairly between clients, so that a flood of sign-ins
/// from some addresses or for some accounts cannot starve everyone else's (issue 25, point 5).
///
/// At most as many jobs as the pool has threads run at once; the rest wait here. When a thread
/// frees, the waiting job whose *source* asks least runs next: every job belongs to two flows,
/// its client address and its account; a flow's score is the number of its jobs waiting or
/// running plus the number it started, that second part halving every `halfLife`; and a job
/// ranks by the larger of its two flows' scores (the earlier first among equals). A newcomer
/// therefore overtakes a flood's backlog, whether the flood comes from many addresses for one
/// account or from one address for many accounts.
///
/// Admission answers `RESOURCE_EXHAUSTED`/`OVERLOADED` at once — never after the caller's
/// deadline — when the caller's address already has `perAddress` jobs waiting or its account
/// `perAccount`, when the job could not start before its start-by time (its deadline less a
/// hash's duration, and at most `maxWait` from now) given the jobs ranked ahead of it, or when
/// `queueLimit` jobs wait and none ranks below it (one that does is refused in its place). A
/// waiting job whose start-by time passes is refused rather than run.
///
/// Thread-safe: the state lives behind a `Mutex`; continuations are resumed outside it.
final class HashScheduler: Sendable {
    /// Who a job is for, and by when its answer is needed.
    struct Caller: Sendable {
        /// The client address (`AuthService.clientAddress`).
        let address: String
        /// The account, by normalized email (as typed when it cannot be normalized).
        let account: String
        /// When the caller gives up; nil for no deadline.
        let deadline: ContinuousClock.Instant?
    }

    /// The admission bounds (README "Password hashing").
    struct Limits: Sendable {
        /// Jobs that may wait in all.
        var queueLimit = 64
        /// Jobs of one client address that may wait.
        var perAddress = 16
        /// Jobs of one account that may wait.
        var perAccount = 16
        /// The longest a job waits for a thread, deadline or not.
        var maxWait: Duration = .seconds(5)
        /// How fast a flow's score fades: it halves every `halfLife`.
        var halfLife: Duration = .seconds(10)
    }

    private struct Waiter {
        let id: UInt64
        let address: String
        let account: String
        let queuedAt: ContinuousClock.Instant
        /// The latest instant it may start and still answer in time.
        let startBy: ContinuousClock.Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Flow {
        /// Jobs started, decayed to `updated`.
        var score: Double = 0
        var updated: ContinuousClock.Instant
        /// Jobs of the flow waiting or running.
        var occupancy = 0
    }

    private struct State {
        var waiters: [Waiter] = []
        var running = 0
        var flows: [String: Flow] = [:]
        var nextID: UInt64 = 0
        /// The recent mean duration of a job; nil until one has run.
        var meanDuration: Duration?
        var lastSweep = ContinuousClock.now
    }

    /// The bounds in effect.
    let limits: Limits
    private let pool: BlockingPool
    private let state = Mutex(State())

    /// A scheduler running its jobs on `pool`, as many at once as it has threads.
    init(pool: BlockingPool, limits: Limits = Limits()) {
        self.pool = pool
        self.limits = limits
    }

    /// The number of jobs waiting for a thread.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Runs `body` on the pool for `caller` once it is admitted and its turn comes.
    /// - Throws: `RESOURCE_EXHAUSTED`/`OVERLOADED` when refused or dropped (see the type),
    ///   `CancellationError` when the task is cancelled while waiting, or what `body` throws.
    func run<Result: Sendable>(for caller: Caller, _ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await admit(caller)
        let started = ContinuousClock.now
        defer { finished(caller, after: ContinuousClock.now - started) }
        return try await pool.run(body)
    }

    /// Waits until `caller`'s job may take a thread (counted as running from then on).
    private func admit(_ caller: Caller) async throws {
        let cancelled = Atomic<Bool>(false)
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // nil: it waits, and whoever removes it from the waiters resumes it.
                let (outcome, evicted) = state.withLock { state -> (Swift.Result<Void, any Error>?, [Waiter]) in
                    let now = ContinuousClock.now
                    if cancelled.load(ordering: .relaxed) { return (.failure(CancellationError()), []) }
                    if state.running < pool.threadCount && state.waiters.isEmpty {
                        occupy(address: caller.address, account: caller.account, by: 1, now: now, state: &state)
                        start(address: caller.address, account: caller.account, now: now, state: &state)
                        return (.success(()), [])
                    }
                    let waiter = Waiter(
                        id: id, address: caller.address, account: caller.account, queuedAt: now,
                        startBy: startBy(caller.deadline, now: now, mean: state.meanDuration), continuation: continuation)
                    guard let evicted = admission(of: waiter, now: now, state: &state) else {
                        return (.failure(AuthError.overloaded), [])
                    }
                    state.waiters.append(waiter)
                    occupy(address: waiter.address, account: waiter.account, by: 1, now: now, state: &state)
                    for other in evicted { occupy(address: other.address, account: other.account, by: -1, now: now, state: &state) }
                    return (nil, evicted)
                }
                for waiter in evicted { waiter.continuation.resume(throwing: AuthError.overloaded) }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            cancelled.store(true, ordering: .relaxed)
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                let waiter = state.waiters.remove(at: index)
                occupy(address: waiter.address, account: waiter.account, by: -1, now: .now, state: &state)
                return waiter
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Whether `waiter` may wait: nil when it is refused, else the waiters refused in its place.
    private func admission(of waiter: Waiter, now: ContinuousClock.Instant, state: inout State) -> [Waiter]? {
        var sameAddress = 0
        var sameAccount = 0
        var ahead = 0
        // Ranked as it will be once it counts in its flows.
        let rank = self.rank(address: waiter.address, account: waiter.account, now: now, state: &state) + 1
        var worst: (index: Int, rank: Double, queuedAt: ContinuousClock.Instant)?
        for (index, other) in state.waiters.enumerated() {
            if other.address == waiter.address { sameAddress += 1 }
            if other.account == waiter.account { sameAccount += 1 }
            let otherRank = self.rank(address: other.address, account: other.account, now: now, state: &state)
            if otherRank <= rank { ahead += 1 }
            if worst.map({ otherRank > $0.rank || (otherRank == $0.rank && other.queuedAt > $0.queuedAt) }) ?? true {
                worst = (index, otherRank, other.queuedAt)
            }
        }
        guard sameAddress < limits.perAddress, sameAccount < limits.perAccount else { return nil }
        if let mean = state.meanDuration {
            // Its turn comes after those ranked ahead, `threadCount` at a time, once the running ones end.
            let rounds = Double(ahead + state.running) / Double(pool.threadCount)
            if now + mean * rounds > waiter.startBy { return nil }
        }
        guard state.waiters.count >= limits.queueLimit else { return [] }
        // A full queue takes a newcomer only in place of one that ranks below it.
        guard let worst, worst.rank > rank else { return nil }
        return [state.waiters.remove(at: worst.index)]
    }

    /// `caller`'s job ended after `duration`: frees its thread and starts the next ones.
    private func finished(_ caller: Caller, after duration: Duration) {
        let resume = state.withLock { state -> [(CheckedContinuation<Void, any Error>, Bool)] in
            state.running -= 1
            occupy(address: caller.address, account: caller.account, by: -1, now: .now, state: &state)
            state.meanDuration = state.meanDuration.map { $0 * 0.8 + duration * 0.2 } ?? duration
            return dispatch(&state)
        }
        for (continuation, proceed) in resume {
            if proceed { continuation.resume() } else { continuation.resume(throwing: AuthError.overloaded) }
        }
    }

    /// Starts the best-ranked waiters while threads are free, and drops every waiter whose
    /// start-by time has passed.
    private func dispatch(_ state: inout State) -> [(CheckedContinuation<Void, any Error>, Bool)] {
        let now = ContinuousClock.now
        var resume: [(CheckedContinuation<Void, any Error>, Bool)] = []
        let late = state.waiters.filter { $0.startBy < now }
        if !late.isEmpty {
            state.waiters.removeAll { $0.startBy < now }
            for waiter in late {
                occupy(address: waiter.address, account: waiter.account, by: -1, now: now, state: &state)
                resume.append((waiter.continuation, false))
            }
        }
        while state.running < pool.threadCount, !state.waiters.isEmpty {
            var best = 0
            var bestRank = Double.infinity
            for (index, waiter) in state.waiters.enumerated() {
                let rank = self.rank(address: waiter.address, account: waiter.account, now: now, state: &state)
                if rank < bestRank { (best, bestRank) = (index, rank) }  // the earliest among equals
            }
            let waiter = state.waiters.remove(at: best)
            start(address: waiter.address, account: waiter.account, now: now, state: &state)
            resume.append((waiter.continuation, true))
        }
        if now - state.lastSweep > limits.halfLife { sweep(&state, now: now) }
        return resume
    }

    /// What one failed password check adds to its address's score: a source of wrong passwords
    /// ranks as if it had run this many more hashes, so that a sprayer using as many addresses
    /// as it has calls in flight still waits behind addresses that sign in rightly.
    static let failurePenalty = 4.0

    /// A password check for `caller` failed (a wrong password, or no such account): its
    /// address — not its account, or a stranger's wrong guesses would push the owner back —
    /// ranks lower for a while (``failurePenalty``, fading as scores do).
    func recordFailure(of caller: Caller) {
        adjust([Self.addressKey(caller.address)], by: Self.failurePenalty)
    }

    /// What one successful password check takes off its address's and account's scores, down
    /// to ``maximumCredit`` below zero: a sprayer's fresh addresses, which have no history, must
    /// not rank ahead of an address and account that have signed in rightly before.
    static let successCredit = 4.0
    /// The most credit a flow may bank.
    static let maximumCredit = 8.0

    /// A password check for `caller` succeeded: its address and account rank higher for a while.
    func recordSuccess(of caller: Caller) {
        adjust([Self.addressKey(caller.address), Self.accountKey(caller.account)], by: -Self.successCredit)
    }

    /// Adds `change` to the decayed scores of the flows at `keys` (never below the credit floor).
    private func adjust(_ keys: [String], by change: Double) {
        state.withLock { state in
            let now = ContinuousClock.now
            for key in keys {
                var flow = state.flows[key] ?? Flow(updated: now)
                flow.score = max(-Self.maximumCredit, decayed(flow, now: now) + change)
                flow.updated = now
                state.flows[key] = flow
            }
        }
    }

    /// Counts a job starting: one more running, and its flows charged.
    private func start(address: String, account: String, now: ContinuousClock.Instant, state: inout State) {
        state.running += 1
        for key in [Self.addressKey(address), Self.accountKey(account)] {
            var flow = state.flows[key] ?? Flow(updated: now)
            flow.score = decayed(flow, now: now) + 1
            flow.updated = now
            state.flows[key] = flow
        }
    }

    /// Counts a job of `address` and `account` in (`change` 1) or out (-1) of their flows.
    private func occupy(address: String, account: String, by change: Int, now: ContinuousClock.Instant, state: inout State) {
        for key in [Self.addressKey(address), Self.accountKey(account)] {
            var flow = state.flows[key] ?? Flow(updated: now)
            flow.occupancy += change
            state.flows[key] = flow
        }
    }

    /// A job's rank: the larger of its flows' scores now (lower runs first).
    private func rank(address: String, account: String, now: ContinuousClock.Instant, state: inout State) -> Double {
        max(score(state.flows[Self.addressKey(address)], now: now), score(state.flows[Self.accountKey(account)], now: now))
    }

    /// A flow's score at `now`: its jobs waiting or running, and those it started, decayed.
    private func score(_ flow: Flow?, now: ContinuousClock.Instant) -> Double {
        guard let flow else { return 0 }
        return Double(flow.occupancy) + decayed(flow, now: now)
    }

    /// The jobs `flow` started, decayed to `now`.
    private func decayed(_ flow: Flow?, now: ContinuousClock.Instant) -> Double {
        guard let flow else { return 0 }
        return flow.score * exp2(-((now - flow.updated) / limits.halfLife))
    }

    /// Forgets flows whose score has faded to nothing, so the table stays bounded.
    private func sweep(_ state: inout State, now: ContinuousClock.Instant) {
        state.flows = state.flows.filter { _, flow in flow.occupancy > 0 || abs(decayed(flow, now: now)) >= 0.01 }
        state.lastSweep = now
    }

    /// The latest instant a job may start and still end before `deadline`, and no later than
    /// `maxWait` from now.
    private func startBy(_ deadline: ContinuousClock.Instant?, now: ContinuousClock.Instant, mean: Duration?) -> ContinuousClock.Instant {
        let latest = now + limits.maxWait
        guard let deadline else { return latest }
        return min(latest, deadline - (mean ?? .zero))
    }

    private static func addressKey(_ address: String) -> String { "a:" + address }
    private static func accountKey(_ account: String) -> String { "u:" + account }

}
