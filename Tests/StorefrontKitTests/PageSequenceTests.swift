import Contracts
import Foundation
@testable import StorefrontKit
import Testing

/// The paging sequences over an in-process catalog (``FakeShopService``): each page fetched
/// only when asked for, with the token of the page before; the end after the last; errors and
/// cancellation.
@Suite("StorefrontKit paging")
struct PageSequenceTests {
    @Test("Pages are fetched one at a time as iteration asks, each with the previous token, ending after the last")
    func pagesInTurn() async throws {
        let fake = FakeShopService(productCount: 10)
        let client = fake.client()
        let pages = client.catalog.products(pageSize: 4)
        var iterator = pages.makeAsyncIterator()
        #expect(fake.pageTokens.isEmpty, "nothing is fetched before the first next()")
        let first = try #require(try await iterator.next())
        #expect(first.products.map(\.id) == [1, 2, 3, 4] && first.totalSize == 10)
        #expect(fake.pageTokens == [nil])
        let second = try #require(try await iterator.next())
        #expect(second.products.map(\.id) == [5, 6, 7, 8])
        let third = try #require(try await iterator.next())
        #expect(third.products.map(\.id) == [9, 10])
        #expect(try await iterator.next() == nil)
        #expect(try await iterator.next() == nil)
        #expect(fake.pageTokens == [nil, "p4", "p8"], "no fetch after the last page")

        // A new iteration starts again at the first page.
        #expect(try await pages.all().flatMap(\.products).map(\.id) == Array(1...10))
        #expect(fake.pageTokens.count == 6)
        await client.close()
    }

    @Test("A listing that fits one page is one page; an empty one is one empty page")
    func singlePage() async throws {
        let fake = FakeShopService(productCount: 3)
        let client = fake.client()
        #expect(try await client.catalog.products(pageSize: 20).all().map { $0.products.map(\.id) } == [[1, 2, 3]])
        let empty = FakeShopService(productCount: 0).client()
        #expect(try await empty.catalog.search("anything").all() == [ProductsPage(products: [], totalSize: 0)])
        await client.close()
        await empty.close()
    }

    @Test("A refused page throws its StorefrontError, and the iteration ends")
    func refusedPageEnds() async throws {
        let fake = FakeShopService(productCount: 10)
        let client = fake.client()
        var iterator = PageSequence<[Product]> { token throws(StorefrontError) in
            let answer = try await client.calls.anonymous(
                CatalogContract.listProducts, ListProductsRequest(pageSize: 5, pageToken: token ?? "bogus"))
            return (answer.products, answer.nextPageToken)
        }.makeAsyncIterator()
        await expectReason(.invalidPageToken, .invalidArgument) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
        #expect(fake.pageTokens == ["bogus"])
        await client.close()
    }

    @Test("In a cancelled task the next page is not fetched: iterating throws .cancelled")
    func cancelledIteration() async throws {
        let fake = FakeShopService(productCount: 10)
        let client = fake.client()
        let pages = client.catalog.products(pageSize: 2)
        let started = AsyncStream.makeStream(of: Void.self)
        let proceed = AsyncStream.makeStream(of: Void.self)
        let iteration = Task {
            var iterator = pages.makeAsyncIterator()
            _ = try await iterator.next()
            started.continuation.yield()
            for await _ in proceed.stream { break }
            return try await iterator.next()
        }
        for await _ in started.stream { break }
        iteration.cancel()
        proceed.continuation.yield()
        let error = await #expect(throws: StorefrontError.self) { try await iteration.value }
        #expect(error?.code == .cancelled)
        #expect(fake.pageTokens == [nil])
        await client.close()
    }
}

extension PageSequence {
    /// Every page, fetched in turn.
    func all() async throws -> [Page] {
        var pages: [Page] = []
        for try await page in self { pages.append(page) }
        return pages
    }
}
