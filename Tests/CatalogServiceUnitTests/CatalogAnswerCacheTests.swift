@testable import catalog_svc
import Contracts
import Foundation
import Testing

/// `CatalogAnswerCache`: answers kept by product and by listing request, dropped by product
/// writes, never kept when read before a write that ended since, and bounded.
@Suite("Catalog answer cache")
struct CatalogAnswerCacheTests {
    static let answer = Data(#"{"product":{"id":1}}"#.utf8)
    static let listing = CatalogAnswerCache.Key.listing(ListProductsRequest(category: "hats"))

    @Test("an answer read at the current generation is kept and answered, by product and by listing request")
    func keeps() {
        let cache = CatalogAnswerCache()
        cache.keep(Self.answer, for: .product(1), readAt: cache.generation)
        cache.keep(Self.answer, for: Self.listing, readAt: cache.generation)
        #expect(cache.answer(for: .product(1)) == Self.answer)
        #expect(cache.answer(for: Self.listing) == Self.answer)
        #expect(cache.answer(for: .product(2)) == nil)
        #expect(cache.answer(for: .listing(ListProductsRequest(category: "hats", pageSize: 5))) == nil)
    }

    @Test("an answer read before a write ended is not kept, whichever product the write changed")
    func readBeforeAWrite() {
        let cache = CatalogAnswerCache()
        let generation = cache.generation
        cache.invalidate([7])
        cache.keep(Self.answer, for: .product(1), readAt: generation)
        cache.keep(Self.answer, for: Self.listing, readAt: generation)
        #expect(cache.size.count == 0)
    }

    @Test("a write drops the answers of its products and every listing; a write of any product drops all")
    func invalidation() {
        let cache = CatalogAnswerCache()
        for id in 1...3 { cache.keep(Self.answer, for: .product(id), readAt: cache.generation) }
        cache.keep(Self.answer, for: Self.listing, readAt: cache.generation)
        cache.invalidate([2])
        #expect(cache.answer(for: .product(1)) == Self.answer)
        #expect(cache.answer(for: .product(2)) == nil)
        #expect(cache.answer(for: Self.listing) == nil)
        #expect(cache.size.bytes == 2 * Self.answer.count)  // the listing's request text went with it
        cache.invalidate(nil)
        #expect(cache.size.count == 0)
        #expect(cache.size.bytes == 0)
    }

    @Test("a full cache starts over: it never holds more than its capacity or its bytes")
    func bounded() {
        let cache = CatalogAnswerCache(capacity: 3, byteLimit: 8 * Self.answer.count)
        for id in 1...7 {
            cache.keep(Self.answer, for: .product(id), readAt: cache.generation)
            #expect(cache.size.count <= 3)
        }
        #expect(cache.answer(for: .product(7)) == Self.answer)
        let bytes = CatalogAnswerCache(capacity: 100, byteLimit: 8 * Self.answer.count)
        for id in 1...20 {
            bytes.keep(Self.answer, for: .product(id), readAt: bytes.generation)
            #expect(bytes.size.bytes <= 8 * Self.answer.count)
        }
        // An answer over an eighth of the limit is not kept at all.
        bytes.keep(Data(count: Self.answer.count + 1), for: .product(99), readAt: bytes.generation)
        #expect(bytes.answer(for: .product(99)) == nil)
    }

    @Test("a listing's request text counts in the bytes, and a long one is not kept at all")
    func listingKeysBounded() {
        let cache = CatalogAnswerCache()
        let query = String(repeating: "a", count: 100)
        cache.keep(Self.answer, for: .listing(ListProductsRequest(query: query)), readAt: cache.generation)
        #expect(cache.size.bytes == Self.answer.count + 100)
        // One character and a million combining accents: a short query by Character count.
        let huge = "!" + String(repeating: "\u{301}", count: 1_000_000)
        cache.keep(Self.answer, for: .listing(ListProductsRequest(query: huge)), readAt: cache.generation)
        #expect(cache.size.count == 1)
    }

    @Test("a full set of listings starts over without the products")
    func listingsHaveTheirOwnBound() {
        let cache = CatalogAnswerCache(listingCapacity: 2)
        cache.keep(Self.answer, for: .product(1), readAt: cache.generation)
        for page in 1...5 {
            cache.keep(Self.answer, for: .listing(ListProductsRequest(pageSize: page)), readAt: cache.generation)
        }
        #expect(cache.answer(for: .product(1)) == Self.answer)
        #expect(cache.answer(for: .listing(ListProductsRequest(pageSize: 5))) == Self.answer)
        #expect(cache.size.count <= 3)
    }
}
