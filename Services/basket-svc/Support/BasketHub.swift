import Contracts
import Synchronization

/// Hands each committed basket to the `WatchBasket` streams of its user in this process: the
/// baskets this process changed (by the handlers), and on PostgreSQL those another replica
/// changed (re-read by ``BasketRefresher`` when ``BasketChangeFeed`` hears of them).
///
/// Every watcher holds at most one unsent snapshot, the newest (an `AsyncStream` buffering the
/// newest element only): a slow reader gets the latest state, never a backlog. Snapshots only
/// move forward: a watcher is given a basket only if its version is above the last one it
/// was given, so snapshots published out of order by concurrent handlers (or the initial
/// read racing a change) never make a watcher go back to an older state.
///
/// Thread-safe: the watchers live behind a `Mutex`. A watcher is removed as soon as its
/// stream ends (the call finished or was cancelled).
final class BasketHub: Sendable {
    private struct Watcher {
        let continuation: AsyncStream<Basket>.Continuation
        /// The version of the last snapshot given; -1 before the first.
        var lastVersion = -1
    }

    private struct State {
        var watchers: [String: [Int: Watcher]] = [:]
        var nextID = 0
        var closed = false
    }

    private let state = Mutex(State())

    /// Creates a hub without watchers.
    init() {}

    /// A stream of `userID`'s baskets as they are published, registered before this returns so
    /// that a change right after the caller reads the current basket is not missed. Finishes
    /// at once when the hub is closed.
    func watch(userID: String) -> AsyncStream<Basket> {
        let (stream, continuation) = AsyncStream<Basket>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.watchers[userID]?[id] = nil
                if state.watchers[userID]?.isEmpty == true { state.watchers[userID] = nil }
            }
        }
        let registered = state.withLock { state in
            guard !state.closed else { return false }
            state.watchers[userID, default: [:]][id] = Watcher(continuation: continuation)
            return true
        }
        if !registered { continuation.finish() }
        return stream
    }

    /// Gives `basket` to every watcher of `userID` that has not had this version or a newer one.
    func publish(_ basket: Basket, userID: String) {
        state.withLock { state in
            guard var watchers = state.watchers[userID] else { return }
            // Yielding under the lock keeps the version check and the hand-over one step, so two
            // publishers cannot interleave; `yield` never blocks and never calls `onTermination`.
            for (id, watcher) in watchers where watcher.lastVersion < basket.version {
                watcher.continuation.yield(basket)
                watchers[id]?.lastVersion = basket.version
            }
            state.watchers[userID] = watchers
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

    /// Ends every watcher's stream and refuses new ones: the start of a shutdown, so that
    /// open `WatchBasket` calls end at once instead of holding the drain for its grace period.
    func close() {
        let continuations = state.withLock { state in
            state.closed = true
            return state.watchers.values.flatMap { $0.values.map(\.continuation) }
        }
        // Outside the lock: `finish()` runs `onTermination`, which takes it.
        for continuation in continuations { continuation.finish() }
    }
}
