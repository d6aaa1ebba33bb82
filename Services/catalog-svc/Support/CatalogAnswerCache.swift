import Contracts
import Foundation
import Synchronization

/// catalog-svc's encoded answers to the reads shoppers repeat — `GetProduct` by product id,
/// `ListProducts` by request (a category's first page, a popular search) — so that a read asked
/// again is answered without reading the database or encoding the answer again.
///
/// Coherence: every write of the store that changes products (upsert, delete, import, stock
/// taken or given back) drops, once it has ended and before its caller is answered
/// (`CatalogStore.writeProducts`), the answers of the products it changed and every listing
/// (what a page holds, its order and its total may all change); and an answer computed from
/// the database is kept only when nothing was dropped since before its read began
/// (`generation`), so an answer read before a write cannot be kept after it. A read that
/// starts after a write was acknowledged therefore sees it.
///
/// Only this process writes a SQLite catalog. On PostgreSQL other replicas write too, and the
/// store keeps no cache: a feed of their writes calling `invalidate(_:)` is what would let it.
///
/// Bounded: at most `capacity` product answers and `listingCapacity` listings, `byteLimit` bytes
/// of answers and listing requests together; a full cache starts over empty (a full set of
/// listings, only the listings: a stream of new searches does not push out the products). An
/// answer larger than an eighth of the limit, or a listing whose request's text exceeds
/// `maximumListingKeyBytes`, is not kept. Thread-safe: a lock.
final class CatalogAnswerCache: Sendable {
    /// What an answer answers.
    enum Key: Hashable, Sendable {
        /// `GetProduct` of this id.
        case product(Int)
        /// `ListProducts` with this request, as sent.
        case listing(ListProductsRequest)
    }

    private struct State {
        /// Raised by every invalidation.
        var generation: UInt64 = 0
        var products: [Int: Data] = [:]
        var listings: [ListProductsRequest: Data] = [:]
        /// The bytes of the answers kept.
        var bytes = 0

        /// The bytes of the listings kept, their requests' text included.
        var listingBytes = 0

        var count: Int { products.count + listings.count }

        mutating func removeAll() {
            products.removeAll(keepingCapacity: true)
            removeListings()
            bytes = 0
        }

        mutating func removeListings() {
            listings.removeAll(keepingCapacity: true)
            bytes -= listingBytes
            listingBytes = 0
        }
    }

    /// The longest listing request kept, in bytes of its text (category, query, page token).
    static let maximumListingKeyBytes = 1_024

    private let state = Mutex(State())
    /// The most product answers kept.
    let capacity: Int
    /// The most listings kept.
    let listingCapacity: Int
    /// The most bytes kept.
    let byteLimit: Int

    /// An empty cache of at most `capacity` product answers, `listingCapacity` listings and
    /// `byteLimit` bytes.
    init(capacity: Int = 10_000, listingCapacity: Int = 1_000, byteLimit: Int = 32 << 20) {
        precondition(capacity > 0 && listingCapacity > 0 && byteLimit > 0, "the cache's bounds must be positive")
        self.capacity = capacity
        self.listingCapacity = listingCapacity
        self.byteLimit = byteLimit
    }

    /// The generation now: take it before reading, give it to `keep(_:for:readAt:)`.
    var generation: UInt64 {
        state.withLock { $0.generation }
    }

    /// How many answers are kept, and their bytes. For tests and diagnostics.
    var size: (count: Int, bytes: Int) {
        state.withLock { ($0.count, $0.bytes) }
    }

    /// The kept answer for `key`, or nil. A listing whose text is too long to be kept is not
    /// looked up: hashing it (under the lock every lookup takes) would cost as much as it is long.
    func answer(for key: Key) -> Data? {
        if case .listing(let request) = key, Self.textBytes(of: request) > Self.maximumListingKeyBytes { return nil }
        return state.withLock { state in
            switch key {
            case .product(let id): state.products[id]
            case .listing(let request): state.listings[request]
            }
        }
    }

    /// Keeps `answer` for `key`, computed from reads begun after `generation` was taken —
    /// unless products changed since.
    func keep(_ answer: Data, for key: Key, readAt generation: UInt64) {
        guard answer.count <= byteLimit / 8 else { return }
        switch key {
        case .product(let id):
            state.withLock { state in
                guard state.generation == generation else { return }
                if state.products.count >= capacity || state.bytes + answer.count > byteLimit { state.removeAll() }
                let replaced = state.products.updateValue(answer, forKey: id)
                state.bytes += answer.count - (replaced?.count ?? 0)
            }
        case .listing(let request):
            let keyBytes = Self.textBytes(of: request)
            guard keyBytes <= Self.maximumListingKeyBytes else { return }
            let size = answer.count + keyBytes
            state.withLock { state in
                guard state.generation == generation else { return }
                if state.listings.count >= listingCapacity { state.removeListings() }
                if state.bytes + size > byteLimit { state.removeAll() }
                let replaced = state.listings.updateValue(answer, forKey: request)
                let change = size - (replaced.map { $0.count + keyBytes } ?? 0)
                state.bytes += change
                state.listingBytes += change
            }
        }
    }

    /// The bytes of a listing request's text.
    private static func textBytes(of request: ListProductsRequest) -> Int {
        (request.category?.utf8.count ?? 0) + (request.query?.utf8.count ?? 0) + (request.pageToken?.utf8.count ?? 0)
    }

    /// Drops the answers of the products `ids` (nil: of every product) and every listing.
    func invalidate(_ ids: [Int]?) {
        state.withLock { state in
            state.generation &+= 1
            guard let ids else { return state.removeAll() }
            for id in ids {
                if let dropped = state.products.removeValue(forKey: id) { state.bytes -= dropped.count }
            }
            state.removeListings()
        }
    }
}
