import Foundation
import Synchronization

/// `GetProduct`'s answers, encoded, by product id: a product asked for again is answered
/// without reading the database or encoding it again.
///
/// Coherence: every write of the store that changes products (upsert, delete, import, stock
/// taken or given back) drops the answers of the products it changed once it has ended,
/// before its caller is answered (`CatalogStore.writeProducts`); and an answer read from the
/// database is kept only when nothing was dropped since before that read began
/// (`generation`), so an answer read before a write cannot be kept after it. A read that
/// starts after a write was acknowledged therefore sees it.
///
/// Only this process writes a SQLite catalog. On PostgreSQL other replicas write too, and the
/// store keeps no cache: a feed of their writes calling `invalidate(_:)` is what would let it.
///
/// Bounded: at most `capacity` answers; a full cache starts over empty. Thread-safe: a lock.
final class ProductAnswerCache: Sendable {
    private struct State {
        /// Raised by every invalidation.
        var generation: UInt64 = 0
        var answers: [Int: Data] = [:]
    }

    private let state = Mutex(State())
    /// The most answers kept.
    let capacity: Int

    /// An empty cache of at most `capacity` answers.
    init(capacity: Int = 10_000) {
        precondition(capacity > 0, "capacity must be positive")
        self.capacity = capacity
    }

    /// The generation now: take it before reading a product, give it to `keep(_:for:readAt:)`.
    var generation: UInt64 {
        state.withLock { $0.generation }
    }

    /// How many answers are kept. For tests and diagnostics.
    var count: Int {
        state.withLock { $0.answers.count }
    }

    /// The kept answer for product `id`, or nil.
    func answer(for id: Int) -> Data? {
        state.withLock { $0.answers[id] }
    }

    /// Keeps `answer` for product `id`, read from the database after `generation` was taken —
    /// unless products changed since.
    func keep(_ answer: Data, for id: Int, readAt generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.answers.count >= capacity { state.answers.removeAll(keepingCapacity: true) }
            state.answers[id] = answer
        }
    }

    /// Drops the answers of the products `ids` (nil: of every product).
    func invalidate(_ ids: [Int]?) {
        state.withLock { state in
            state.generation &+= 1
            guard let ids else { return state.answers.removeAll(keepingCapacity: true) }
            for id in ids { state.answers[id] = nil }
        }
    }
}
