@testable import catalog_svc
import Foundation
import Testing

/// `ProductAnswerCache`: answers kept by id, dropped by product writes, never kept when read
/// before a write that ended since, and bounded.
@Suite("Product answer cache")
struct ProductAnswerCacheTests {
    static let answer = Data(#"{"product":{"id":1}}"#.utf8)

    @Test("an answer read at the current generation is kept and answered")
    func keeps() {
        let cache = ProductAnswerCache()
        cache.keep(Self.answer, for: 1, readAt: cache.generation)
        #expect(cache.answer(for: 1) == Self.answer)
        #expect(cache.answer(for: 2) == nil)
    }

    @Test("an answer read before a write ended is not kept, whichever product the write changed")
    func readBeforeAWrite() {
        let cache = ProductAnswerCache()
        let generation = cache.generation
        cache.invalidate([7])
        cache.keep(Self.answer, for: 1, readAt: generation)
        #expect(cache.answer(for: 1) == nil)
    }

    @Test("a write drops the answers of its products, or of every product")
    func invalidation() {
        let cache = ProductAnswerCache()
        for id in 1...3 { cache.keep(Self.answer, for: id, readAt: cache.generation) }
        cache.invalidate([2])
        #expect(cache.answer(for: 1) == Self.answer)
        #expect(cache.answer(for: 2) == nil)
        cache.invalidate(nil)
        #expect(cache.count == 0)
    }

    @Test("a full cache starts over: it never holds more than its capacity")
    func bounded() {
        let cache = ProductAnswerCache(capacity: 3)
        for id in 1...7 {
            cache.keep(Self.answer, for: id, readAt: cache.generation)
            #expect(cache.count <= 3)
        }
        #expect(cache.answer(for: 7) == Self.answer)
    }
}
