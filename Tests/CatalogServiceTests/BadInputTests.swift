import Contracts
import Foundation
import RPC
import RPCHTTP2
import ServiceTestSupport
import Testing

/// Malformed and hostile requests (API.md §1, README "Where API.md is silent"): wrong JSON
/// types and missing fields are `INVALID_ARGUMENT`/`MALFORMED_MESSAGE` naming the field, huge
/// strings are refused or harmless, and catalog-svc keeps serving after every one.
@Suite("Bad input")
struct BadInputTests {
    /// Bodies for one method that must be refused as malformed, each with the field named.
    struct Malformed: Sendable, CustomTestStringConvertible {
        /// The method called.
        var method: MethodInfo
        /// Each body, and the field its violation must name.
        var cases: [(json: String, field: String)]
        var testDescription: String { method.method }

        /// The table, one entry per method.
        static let all = [
            Malformed(method: CatalogContract.listProducts.info, cases: [
                (#"{"pageSize":"20"}"#, "pageSize"), (#"{"sort":"CHEAPEST"}"#, "sort"), (#"{"category":7}"#, "category"),
                (#"{"query":["lamp"]}"#, "query"), (#"{"pageToken":{}}"#, "pageToken"),
            ]),
            Malformed(method: CatalogContract.getProduct.info, cases: [
                (#"{"id":"1"}"#, "id"), (#"{"id":1.5}"#, "id"), (#"{"id":1e2}"#, "id"), (#"{"id":null}"#, "id"), ("{}", "id"),
            ]),
            Malformed(method: CatalogContract.batchGetProducts.info, cases: [
                (#"{"ids":[1,"2"]}"#, "ids[1]"), (#"{"ids":5}"#, "ids"), ("{}", "ids"),
            ]),
            Malformed(method: CatalogContract.addFavorite.info, cases: [(#"{"productId":true}"#, "productId"), ("{}", "productId")]),
            Malformed(method: CatalogContract.listFavorites.info, cases: [(#"{"pageSize":true}"#, "pageSize")]),
            Malformed(method: CatalogContract.upsertProduct.info, cases: [
                ("{}", "product"), (#"{"product":[]}"#, "product"),
                (#"{"product":{"title":"Lamp"}}"#, "product.description"),
                (productJSON(replacing: #""title":"Lamp""#, with: #""title":5"#), "product.title"),
                (productJSON(replacing: #""amount":1200"#, with: #""amount":"12.00""#), "product.price.amount"),
                (productJSON(replacing: #""stock":4"#, with: #""stock":4.5"#), "product.stock"),
            ]),
            Malformed(method: CatalogContract.deleteProduct.info, cases: [(#"{"id":"all"}"#, "id")]),
            Malformed(method: CatalogContract.reserveStock.info, cases: [
                (#"{"reservationId":1,"items":[]}"#, "reservationId"),
                (#"{"reservationId":"r","items":[{"productId":1,"count":"2"}]}"#, "items[0].count"),
                (#"{"items":[]}"#, "reservationId"),
            ]),
            Malformed(method: CatalogContract.releaseStock.info, cases: [(#"{"reservationId":false}"#, "reservationId")]),
        ]

        /// A valid UpsertProduct body with `original` replaced by `replacement`.
        static func productJSON(replacing original: String, with replacement: String) -> String {
            let valid = #"{"product":{"title":"Lamp","description":"Bright.","category":"lighting","#
                + #""price":{"amount":1200,"currency":"USD"},"image":"","rating":{"rate":4,"count":2},"stock":4}}"#
            return valid.replacingOccurrences(of: original, with: replacement)
        }
    }

    /// The metadata that gets a call of `method` past authentication, so the body is judged.
    static func credentials(for method: MethodInfo, _ stack: CatalogStack, _ session: Session) -> Metadata {
        switch method.auth {
        case .admin: [MetadataKey.apiKey: stack.adminKey]
        case .internal: [MetadataKey.apiKey: stack.internalKey]
        case .user, .optionalUser: [MetadataKey.authorization: "Bearer \(session.accessToken)"]
        case .none: Metadata()
        }
    }

    @Test("a wrong JSON type or a missing field is MALFORMED_MESSAGE naming the field", arguments: Malformed.all)
    func malformed(table: Malformed) async throws {
        try await withCatalogService { stack in
            let session = try await stack.signedInUser("ada@example.com")
            let metadata = Self.credentials(for: table.method, stack, session)
            for (json, field) in table.cases {
                let error = await expectRPCError(.invalidArgument, reason: "MALFORMED_MESSAGE") {
                    try await stack.rawCall(table.method.path, [json], metadata: metadata)
                }
                #expect(error?.violatedFields == [field], "\(json)")
            }
            #expect(await stack.isServing())
        }
    }

    @Test("a body that is not a JSON object is MALFORMED_MESSAGE")
    func notAnObject() async throws {
        try await withCatalogService { stack in
            let deep = String(repeating: #"{"a":"#, count: 100) + "1" + String(repeating: "}", count: 100)
            for body in [#"{"id":"#, "[]", #""lamp""#, "null", "42", "\u{FF}\u{FE}", deep] {
                await expectRPCError(.invalidArgument, reason: "MALFORMED_MESSAGE") {
                    try await stack.rawCall(CatalogContract.getProduct.path, [body])
                }
            }
            #expect(await stack.isServing())
        }
    }

    @Test("unknown members are ignored")
    func unknownMembers() async throws {
        try await withCatalogService { stack in
            let product = try #require(try await stack.allProducts().first)
            let body = #"{"id":\#(product.id),"colour":"red","nested":{"list":[1,{"x":null}]}}"#
            let responses = try await stack.rawCall(CatalogContract.getProduct.path, [body])
            #expect(try JSONCodec.shared.decode(ProductResponse.self, from: try #require(responses.first)).product == product)
        }
    }

    @Test("an unknown method of CatalogService is UNIMPLEMENTED")
    func unknownMethod() async throws {
        try await withCatalogService { stack in
            await expectRPCError(.unimplemented, reason: nil) {
                try await stack.rawCall("/\(CatalogContract.service)/DeleteEverything", ["{}"], metadata: stack.asAdmin.metadata)
            }
            #expect(await stack.isServing())
        }
    }

    @Test("1 MiB strings are refused as INVALID_ARGUMENT where a limit applies, and never break the service")
    func hugeStrings() async throws {
        try await withCatalogService { stack in
            let huge = String(repeating: "lamp", count: 1 << 18)
            let productId = try #require(try await stack.allProducts().first?.id)
            await expectRPCError(CatalogReason.invalidPageToken) { try await stack.listProducts(ListProductsRequest(pageToken: huge)) }
            let title = await expectRPCError(CatalogReason.invalidProduct) { try await stack.upsert(SampleProducts.make(huge)) }
            #expect(title?.namesField("title") == true, "\(title?.violatedFields ?? [])")
            let category = await expectRPCError(CatalogReason.invalidProduct) {
                try await stack.upsert(SampleProducts.make("Big category", category: huge))
            }
            #expect(category?.namesField("category") == true, "\(category?.violatedFields ?? [])")
            await expectRPCError(CatalogReason.invalidReservation) { try await stack.reserve(huge, [(productId, 1)]) }
            // API.md documents no limit for a query or category filter (catalog-svc's README
            // does): refused, or a page of nothing.
            for request in [ListProductsRequest(category: huge), ListProductsRequest(query: huge), ListProductsRequest(query: "\u{0}\u{7}")] {
                do {
                    let page = try await stack.listProducts(request)
                    #expect(page.products.isEmpty && page.totalSize == 0)
                } catch let error as RPCError {
                    #expect(error.code == .invalidArgument, "\(error)")
                }
            }
            #expect(await stack.isServing())
        }
    }

    @Test("each field limit of a listing is INVALID_ARGUMENT with a stable reason, naming the field")
    func fieldLimitReasons() async throws {
        try await withCatalogService { stack in
            let query = await expectRPCError(CatalogReason.queryTooLong) {
                try await stack.listProducts(ListProductsRequest(query: String(repeating: "q", count: 501)))
            }
            #expect(query?.violatedFields == ["query"])
            let category = await expectRPCError(CatalogReason.invalidCategory) {
                try await stack.listProducts(ListProductsRequest(category: String(repeating: "c", count: 101)))
            }
            #expect(category?.violatedFields == ["category"])
            let pageSize = await expectRPCError(CommonReason.invalidPageSize) { try await stack.listProducts(ListProductsRequest(pageSize: -1)) }
            #expect(pageSize?.violatedFields == ["pageSize"])
            let ids = await expectRPCError(CatalogReason.tooManyIDs) {
                try await stack.catalogClient.unary(
                    CatalogContract.batchGetProducts, BatchGetProductsRequest(ids: Array(1...101)), options: stack.plain())
            }
            #expect(ids?.violatedFields == ["ids"])
            await expectRPCError(CatalogReason.invalidReservation) { try await stack.reserve("", [(1, 1)]) }
            // 500 characters are still a query.
            _ = try await stack.listProducts(ListProductsRequest(query: String(repeating: "q", count: 500)))
            // One character of 3,000 combining marks is within 500 characters but not within
            // their 2,000 bytes; the same for a category's 100 and 400.
            let marks = "e" + String(repeating: "\u{301}", count: 3000)
            #expect(marks.count == 1)
            let markedQuery = await expectRPCError(CatalogReason.queryTooLong) {
                try await stack.listProducts(ListProductsRequest(query: marks))
            }
            #expect(markedQuery?.violatedFields == ["query"])
            let markedCategory = await expectRPCError(CatalogReason.invalidCategory) {
                try await stack.listProducts(ListProductsRequest(category: "c" + String(repeating: "\u{301}", count: 200)))
            }
            #expect(markedCategory?.violatedFields == ["category"])
            // Counted as sent: a blank query that long is refused, not read as none.
            await expectRPCError(CatalogReason.queryTooLong) {
                try await stack.listProducts(ListProductsRequest(query: String(repeating: " ", count: 501)))
            }
            // Characters of several bytes each are counted as characters up to the byte bound.
            _ = try await stack.listProducts(ListProductsRequest(query: String(repeating: "\u{1F600}", count: 500)))
        }
    }

    @Test("a query of 50,000 one-letter words is answered within 10 seconds")
    func manyWords() async throws {
        try await withCatalogService { stack in
            let query = Array(repeating: "a", count: 50_000).joined(separator: " ")
            let started = ContinuousClock.now
            do {
                _ = try await stack.catalogClient.unary(
                    CatalogContract.listProducts, ListProductsRequest(query: query), options: stack.plain(timeout: .seconds(10)))
            } catch let error as RPCError {
                #expect(error.code == .invalidArgument, "\(error) after \(ContinuousClock.now - started)")
            }
            #expect(await stack.isServing())
        }
    }
}
