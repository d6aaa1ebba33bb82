import ArgumentParser
import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

@testable import shopctl

/// Product files as `admin products import` reads them: the defaults `upsert` uses, products
/// numbered from 1, and every problem of a product at once, checked by the catalog's own rules
/// (issue 27, point 5).
@Suite("import: product files take upsert's defaults and report every problem by product number")
struct ImportProductFileTests {
    /// The entries of `lines` as JSON lines.
    private func entries(_ lines: [String]) throws -> [ProductFile.Entry] {
        try ProductFile.entries(from: Data(lines.joined(separator: "\n").utf8))
    }

    @Test("a product needs title, category and price only; the rest default as for upsert")
    func defaults() throws {
        let read = try entries([#"{"title":"Linen notebook","category":"office","price":{"amount":1200,"currency":"USD"}}"#])
        #expect(read.map(\.problems) == [[]])
        var expected = ProductFile.newProduct
        expected.title = "Linen notebook"
        expected.category = "office"
        expected.price = Money(amount: 1200, currency: "USD")
        #expect(read.first?.product == expected)
        #expect(expected.image == "" && expected.rating == Rating(rate: 0, count: 0) && expected.stock == 0)
        // upsert's flags start from the same product.
        let command = try #require(
            try Shopctl.parseAsRoot(
                ["admin", "products", "upsert", "--api-key", "k", "--title", "Linen notebook", "--category", "office",
                    "--price", "12.00"]) as? AdminCommand.Products.Upsert)
        #expect(try command.applied(to: ProductFile.newProduct) == expected)
    }

    @Test("two faulty products of three are named product 1 and product 3, each with all of its problems")
    func everyProblemByNumber() throws {
        let read = try entries([
            #"{"title":"  ","category":"office","price":{"amount":-5,"currency":"usd"},"stock":-1}"#,
            #"{"title":"Brass pen","category":"office","price":{"amount":3500,"currency":"USD"}}"#,
            "",
            #"{"product":{"title":3,"price":"cheap","rating":{"rate":7,"count":1}}}"#,
        ])
        let failures = read.compactMap(\.failure)
        #expect(failures.map(\.index) == [0, 2])
        #expect(
            failures.first?.reason
                == "The title is empty; the price is negative; the currency 'usd' is not an ISO 4217 code of three "
                + "upper-case letters; the stock -1 is not 0 to 1000000000.")
        #expect(
            failures.last?.reason
                == "The title is not a string; the category is missing; the price is not an object {amount, currency}; "
                + "the rating 7.0 is not between 0 and 5.")
        let lines = failures.map(ProductImportReport.failureLine)
        #expect(lines.first?.hasPrefix("  product 1: The title is empty;") == true)
        #expect(lines.last?.hasPrefix("  product 3: The title is not a string;") == true)
        let error = #expect(throws: ShopctlError.self) {
            try ProductFile.products(of: ProductFile.entries(from: Data("[1, {}]".utf8)))
        }
        #expect(error?.status == .rejected && error?.reason == "INVALID_PRODUCTS")
        #expect(error?.message == "Nothing imported: 2 products of 2 with problems; fix them and run again.")
        #expect(
            error?.problems == [
                "product 1: It is not a JSON object.",
                "product 2: The title is missing; the category is missing; the price is missing.",
            ], "\(String(describing: error))")
    }

    @Test("the real shopctl refuses a faulty file as an error: one error line and a line per product on stderr, exit 4, nothing sent")
    func refusalIsAnError() async throws {
        let root = try TestScratch.makeDirectory(prefix: "shopctl-import-refusal")
        defer { try? FileManager.default.removeItem(at: root) }
        // Nothing listens here: a refused file is never sent, so no connection is needed.
        let port = try #require(try FreePorts.take(1).first)
        let shopctl = ShopctlRunner(configHome: root, gateway: "127.0.0.1:\(port)")
        let file = """
            {"title":"","category":"office","price":{"amount":-1,"currency":"USD"}}
            {"title":"Brass pen","category":"office","price":{"amount":3500,"currency":"USD"}}
            {"title":"Ink","price":{"amount":100,"currency":"USD"}}
            """
        let key = ["SHOP_ADMIN_API_KEY": "admin-key"]
        let refused = try await shopctl.run(["admin", "products", "import", "-"], input: file, environment: key)
        #expect(refused.status == 4, "\(refused)")
        #expect(refused.output.isEmpty, "\(refused)")
        #expect(
            refused.errors == """
                error: INVALID_PRODUCTS: Nothing imported: 2 products of 3 with problems; fix them and run again. \
                (`shopctl describe Product` lists the fields)
                  product 1: The title is empty; the price is negative.
                  product 3: The category is missing.

                """, "\(refused)")
        let json = try await shopctl.run(["--json", "admin", "products", "import", "-"], input: file, environment: key)
        #expect(json.status == 4 && json.output.isEmpty, "\(json)")
        let object = try JSONSerialization.jsonObject(with: Data(json.errors.utf8)) as? [String: Any]
        let error = try #require(object?["error"] as? [String: Any], "\(json)")
        #expect(error["reason"] as? String == "INVALID_PRODUCTS")
        #expect(
            error["problems"] as? [String] == [
                "product 1: The title is empty; the price is negative.", "product 3: The category is missing.",
            ])
        #expect(json.errors.split(separator: "\n").count == 1, "\(json)")
    }

    @Test("a JSON array and JSON lines number their products alike; a line that is not JSON is its product's problem")
    func numbering() throws {
        let good = #"{"title":"A","category":"c","price":{"amount":1,"currency":"USD"}}"#
        let fromArray = try ProductFile.entries(from: Data("[\(good), 5, \(good)]".utf8))
        #expect(fromArray.map(\.number) == [1, 2, 3])
        #expect(fromArray.compactMap(\.failure).map(\.index) == [1])
        let fromLines = try entries([good, "{not json", good])
        #expect(fromLines.compactMap(\.failure).map(\.index) == [1])
        #expect(fromLines[1].problems.first?.hasPrefix("it is not JSON") == true)
    }

    @Test("a dry run plans a create for a new or unknown id and an update for an id that exists or came earlier")
    func plan() throws {
        let read = try entries([
            #"{"title":"New","category":"c","price":{"amount":1,"currency":"USD"}}"#,
            #"{"id":5,"title":"Known","category":"c","price":{"amount":1,"currency":"USD"}}"#,
            #"{"id":900,"title":"Unknown","category":"c","price":{"amount":1,"currency":"USD"}}"#,
            #"{"id":900,"title":"Again","category":"c","price":{"amount":1,"currency":"USD"}}"#,
            #"{"title":"","category":"c","price":{"amount":1,"currency":"USD"}}"#,
        ])
        let plan = ProductImportReport.plan(read, existing: [5])
        #expect(plan.created == 2 && plan.updated == 2)
        #expect(plan.products.map(\.action) == ["CREATE", "UPDATE", "CREATE", "UPDATE"])
        #expect(plan.failed == [ImportFailure(index: 4, reason: "The title is empty.")])
        #expect(
            ProductImportReport.text(plan) == """
                Dry run, nothing written: would create 2, update 2; 1 product with problems.
                  product 1: create new id "New"
                  product 2: update #5 "Known"
                  product 3: create #900 "Unknown"
                  product 4: update #900 "Again"
                  product 5: The title is empty.
                """)
    }
}
