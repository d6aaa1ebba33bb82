import Synchronization

/// Tells `WatchAuthState` streams in this process when their session is revoked.
///
/// A watcher registers its session id and awaits; `revoked(_:)`, called after the revoking
/// transaction committed, wakes every watcher of those sessions. Thread-safe: the waiters
/// live behind a `Mutex`.
final class SessionEvents: Sendable {
    private struct State {
        var waiters: [String: [Int: AsyncStream<Void>.Continuation]] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// A stream that yields once when `sessionID` is revoked, then finishes. Registered before
    /// this returns, so a revocation right after the caller's own check is not missed.
    func revocation(of sessionID: String) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.waiters[sessionID, default: [:]][state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.waiters[sessionID]?[id] = nil
                if state.waiters[sessionID]?.isEmpty == true { state.waiters[sessionID] = nil }
            }
        }
        return stream
    }

    /// How many streams wait for their session's revocation now: the open `WatchAuthState`
    /// calls not yet told `SIGNED_OUT`.
    var watcherCount: Int {
        state.withLock { $0.waiters.values.reduce(0) { $0 + $1.count } }
    }

    /// Wakes the watchers of every session in `sessionIDs`.
    func revoked(_ sessionIDs: some Sequence<String>) {
        let continuations = state.withLock { state in
            sessionIDs.flatMap { state.waiters.removeValue(forKey: $0).map { Array($0.values) } ?? [] }
        }
        for continuation in continuations {
            continuation.yield()
            continuation.finish()
        }
    }
}
