import Contracts
internal import Foundation
import RPC
import ServiceKit
import Synchronization

/// Hands each committed basket to the `WatchBasket` streams of its user in this process: the
/// baskets this process changed (by the handlers), and on PostgreSQL those another replica
/// changed (re-read by ``BasketRefresher`` when ``BasketChangeFeed`` hears of them).
///
/// Each watcher is a ``BasketSubscription``: one slot holding the newest unsent snapshot, read
/// by the watch's own handler task. A watcher costs no task, stream or timer of its own — at
/// tens of thousands of open watches, what each one holds is what the process holds (issue 32,
/// `Benchmarks/basket-fanout`). Snapshots only move forward: a watcher is given a basket only
/// if its version is above the last one it was given, so snapshots published out of order by
/// concurrent handlers (or the initial read racing a change) never make a watcher go back to
/// an older state, and a slow reader gets the latest state, never a backlog.
///
/// Revoked sessions are found by one sweep for all watchers (``RevocationSweep``), every
/// `interval` while any watcher is registered, rather than by a timer per watcher.
///
/// Thread-safe: the watchers live behind a `Mutex`. A watcher is removed when its handler
/// ends (``remove(_:)``).
final class BasketHub: Sendable {
    private struct State {
        /// The watchers of each user, by their id.
        var watchers: [String: [Int: BasketSubscription]] = [:]
        var nextID = 0
        var closed = false
        /// Whether a revocation sweep is running; it stops when no watcher is left.
        var sweeping = false
    }

    private let state = Mutex(State())

    /// Creates a hub without watchers.
    init() {}

    /// A new watcher of `userID`'s baskets, registered before this returns so that a change
    /// right after the caller reads the current basket is not missed; ended at once when the
    /// hub is closed. Starts `revocations`' sweep unless one is running. The caller removes it
    /// (``remove(_:)``) when its watch ends.
    func watch(userID: String, sessionID: String, revocations: RevocationSweep) -> BasketSubscription {
        let subscription = state.withLock { state in
            defer { state.nextID += 1 }
            return BasketSubscription(id: state.nextID, userID: userID, sessionID: sessionID)
        }
        let outcome = state.withLock { state -> (registered: Bool, startSweep: Bool) in
            guard !state.closed else { return (false, false) }
            state.watchers[userID, default: [:]][subscription.id] = subscription
            defer { state.sweeping = true }
            return (true, !state.sweeping)
        }
        if !outcome.registered { subscription.end(.closed) }
        if outcome.startSweep { revocations.start(over: self) }
        return subscription
    }

    /// Takes `subscription` out of the hub: its watch ended.
    func remove(_ subscription: BasketSubscription) {
        state.withLock { state in
            state.watchers[subscription.userID]?[subscription.id] = nil
            if state.watchers[subscription.userID]?.isEmpty == true { state.watchers[subscription.userID] = nil }
        }
    }

    /// Gives `basket` to every watcher of `userID` that has not had this version or a newer one,
    /// encoded once for all of them. A watcher registered after the check for watchers reads
    /// the store after registering, so it sees this basket or a newer one anyway.
    func publish(_ basket: Basket, userID: String) {
        guard isWatched(userID: userID) else { return }
        let snapshot = BasketSnapshot(basket)
        state.withLock { state in
            // Offering under the lock keeps the version check and the hand-over one step per
            // watcher, so two publishers cannot interleave; `offer` never blocks.
            guard let watchers = state.watchers[userID] else { return }
            for subscription in watchers.values { subscription.offer(snapshot) }
        }
    }

    /// Whether `userID` has a watcher in this process.
    func isWatched(userID: String) -> Bool {
        state.withLock { $0.watchers[userID] != nil }
    }

    /// Every user with a watcher in this process.
    var watchedUserIDs: [String] {
        state.withLock { Array($0.watchers.keys) }
    }

    /// How many watchers are registered, over all users.
    var watcherCount: Int {
        state.withLock { $0.watchers.values.reduce(0) { $0 + $1.count } }
    }

    /// Whether `close()` was called.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Ends every watcher and refuses new ones: the start of a shutdown, so that open
    /// `WatchBasket` calls end at once instead of holding the drain for its grace period.
    func close() {
        let subscriptions = state.withLock { state in
            state.closed = true
            return state.watchers.values.flatMap(\.values)
        }
        for subscription in subscriptions { subscription.end(.closed) }
    }

    /// The registered watchers grouped by their session, for the revocation sweep; nil (and
    /// the sweep marked stopped) when none is left or the hub is closed.
    fileprivate func watchersBySession() -> [String: [BasketSubscription]]? {
        state.withLock { state in
            guard !state.closed, !state.watchers.isEmpty else {
                state.sweeping = false
                return nil
            }
            var bySession: [String: [BasketSubscription]] = [:]
            for subscription in state.watchers.values.lazy.flatMap(\.values) {
                bySession[subscription.sessionID, default: []].append(subscription)
            }
            return bySession
        }
    }
}

/// How a hub finds watchers whose session was revoked: every `interval`, it asks `checker` about
/// each watched session and ends the watchers of a revoked one (``BasketSubscription/End/revoked``).
/// One sweep runs per hub while it has watchers, with the checker and interval of the watch
/// that started it (a service gives the same to every watch).
struct RevocationSweep: Sendable {
    /// Where revocations are known.
    let checker: any RevocationChecker
    /// How often each watched session is checked.
    let interval: Duration

    /// Runs the sweep over `hub` until the hub has no watcher left or is closed.
    fileprivate func start(over hub: BasketHub) {
        Task { [weak hub] in
            while true {
                try? await Task.sleep(for: interval)
                guard let bySession = hub?.watchersBySession() else { return }
                for (sessionID, subscriptions) in bySession where await isRevoked(sessionID) {
                    for subscription in subscriptions { subscription.end(.revoked) }
                }
            }
        }
    }

    /// Whether `sessionID` is known revoked; a checker that cannot tell leaves the watch open
    /// (it is asked again on the next sweep).
    private func isRevoked(_ sessionID: String) async -> Bool {
        (try? await checker.isRevoked(sessionID: sessionID)) ?? false
    }
}

/// A basket as published to its watchers, with its message bytes, encoded once for all of them.
struct BasketSnapshot: Sendable {
    /// The basket.
    let basket: Basket
    /// `basket` encoded (``JSONCodec``); nil if encoding failed, and then each watcher's write
    /// encodes it again and fails the way any write of it would.
    let encoded: Data?

    /// The snapshot of `basket`.
    init(_ basket: Basket) {
        self.basket = basket
        self.encoded = try? JSONCodec.shared.encode(basket)
    }
}

/// One `WatchBasket` stream's place in a ``BasketHub``: the newest snapshot not yet taken, the
/// version of the last one given, and the handler waiting for the next (at most one).
///
/// Thread-safe: a `Mutex` over that state; publishers offer from any thread, the watch's
/// handler takes.
final class BasketSubscription: Sendable {
    /// Why a watch ended other than by its caller going away.
    enum End: Sendable {
        /// The hub was closed: the process is shutting down.
        case closed
        /// The watcher's session was revoked.
        case revoked
        /// The handler's task was cancelled.
        case cancelled
    }

    /// A waiting handler: resumed with the next snapshot, or nil when the watch ends. Checked:
    /// it is resumed once per change of a basket, where the check costs nothing measurable.
    typealias Waiter = CheckedContinuation<BasketSnapshot?, Never>

    private struct State {
        /// The newest snapshot given and not yet taken.
        var pending: BasketSnapshot?
        /// The version of the last snapshot given; -1 before the first.
        var lastVersion = -1
        var waiter: Waiter?
        var end: End?
    }

    /// The subscription's id in its hub.
    let id: Int
    /// The user whose baskets it receives.
    let userID: String
    /// The session that opened the watch: its revocation ends the watch.
    let sessionID: String
    private let state = Mutex(State())

    fileprivate init(id: Int, userID: String, sessionID: String) {
        self.id = id
        self.userID = userID
        self.sessionID = sessionID
    }

    /// Why the watch ended; nil while it goes on.
    var ending: End? { state.withLock { $0.end } }

    /// Hands `snapshot` to the watcher when its version is above the last one given: to the
    /// waiting handler, or in place of the snapshot not yet taken.
    fileprivate func offer(_ snapshot: BasketSnapshot) {
        let waiter = state.withLock { state -> Waiter? in
            guard state.end == nil, state.lastVersion < snapshot.basket.version else { return nil }
            state.lastVersion = snapshot.basket.version
            guard let waiter = state.waiter else {
                state.pending = snapshot
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: snapshot)
    }

    /// Ends the watch (unless it already ended): a waiting handler gets nil, and so does every
    /// later ``next()``.
    func end(_ reason: End) {
        let waiter = state.withLock { state -> Waiter? in
            guard state.end == nil else { return nil }
            state.end = reason
            state.pending = nil
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The newest snapshot not yet taken, waiting for one when there is none; nil once the
    /// watch has ended (``ending`` says why) — cancelling the calling task ends it.
    func next() async -> BasketSnapshot? {
        if let ready = take(nil) { return ready }
        return await withTaskCancellationHandler {
            await Self.suspend { waiter in
                if let ready = take(waiter) { waiter.resume(returning: ready) }
            }
        } onCancel: {
            end(.cancelled)
        }
    }

    /// The pending snapshot (`.some(snapshot)`) or the end (`.some(nil)`); otherwise nil, after
    /// storing `waiter` when one is given.
    private func take(_ waiter: Waiter?) -> BasketSnapshot?? {
        state.withLock { state -> BasketSnapshot?? in
            if let pending = state.pending {
                state.pending = nil
                return .some(pending)
            }
            if state.end != nil { return .some(nil) }
            if let waiter { state.waiter = waiter }
            return nil
        }
    }

    /// Suspends until `body`'s ``Waiter`` is resumed.
    private static func suspend(_ body: (Waiter) -> Void) async -> BasketSnapshot? {
        await withCheckedContinuation(body)
    }
}
