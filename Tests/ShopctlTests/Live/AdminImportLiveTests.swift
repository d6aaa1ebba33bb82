import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

@testable import shopctl

/// Import, describe and call against real services (issue 27, points 5 and 6): a file is
/// checked with catalog-svc's own rules before anything is written, a dry run writes nothing,
/// catalog-svc names every problem of a product in the user's words, and `call` takes the
/// names `describe` prints and `--api-key`.
@Suite("shopctl live: import checks, dry runs, describe and call by short names", .serialized)
struct AdminImportLiveTests {
    /// How many products the catalog lists.
    private func productCount(_ shopctl: ShopctlRunner) async throws -> Int {
        try ShopctlJSON.decode(ListProductsResponse.self, try await shopctl.succeed(["--json", "products", "list"]).output)
            .totalSize
    }

    /// A file under the stack's root holding `lines`.
    private func file(_ lines: [String], named name: String, in stack: ShopctlStack) throws -> String {
        let url = stack.services.root.appendingPathComponent(name)
        try Data(lines.joined(separator: "\n").utf8).write(to: url)
        return url.path
    }

    @Test("import: upsert's defaults, every problem by product number, and a dry run that writes nothing")
    func importChecks() async throws {
        try await withShopctlStack { stack in
            let shopctl = try stack.shopctl()
            try await shopctl.waitUntilServing()
            let key = ["SHOP_ADMIN_API_KEY": stack.adminKey]
            let before = try await productCount(shopctl)

            // Neither image nor rating (nor description, nor stock), as upsert needs neither.
            let minimal = try file(
                [#"{"title":"Linen notebook","category":"office","price":{"amount":1200,"currency":"USD"}}"#],
                named: "minimal.jsonl", in: stack)
            let imported = try await shopctl.succeed(["admin", "products", "import", minimal], environment: key)
            #expect(imported.output == "Created 1, updated 0, failed 0.\n", "\(imported)")
            #expect(try await productCount(shopctl) == before + 1)

            // Two faulty products of three: each by its number from 1, with all of its problems; nothing sent.
            let faulty = try file(
                [
                    #"{"title":"","category":"office","price":{"amount":-1,"currency":"USD"}}"#,
                    #"{"title":"Brass pen","category":"office","price":{"amount":3500,"currency":"USD"}}"#,
                    #"{"title":"Ink","price":{"amount":100,"currency":"usd"},"stock":-3}"#,
                ], named: "faulty.jsonl", in: stack)
            let refused = try await shopctl.run(["admin", "products", "import", faulty], environment: key)
            #expect(refused.status == 4, "\(refused)")
            #expect(refused.output.isEmpty, "\(refused)")
            #expect(
                refused.errors == """
                    error: INVALID_PRODUCTS: Nothing imported: 2 products of 3 with problems; fix them and run again. (`shopctl describe Product` lists the fields)
                      product 1: The title is empty; the price is negative.
                      product 3: The category is missing; the currency 'usd' is not an ISO 4217 code of three upper-case letters; the stock -3 is not 0 to 1000000000.

                    """, "\(refused)")
            #expect(try await productCount(shopctl) == before + 1)

            // A dry run (no key needed) plans an update of product 1 and a create, and writes nothing.
            let plan = try file(
                [
                    #"{"id":1,"title":"Renamed","category":"office","price":{"amount":100,"currency":"USD"}}"#,
                    #"{"title":"Fresh","category":"office","price":{"amount":100,"currency":"USD"}}"#,
                ], named: "plan.jsonl", in: stack)
            let dry = try await shopctl.succeed(["admin", "products", "import", "--dry-run", plan])
            #expect(dry.output.hasPrefix("Dry run, nothing written: would create 1, update 1."), "\(dry)")
            #expect(dry.output.contains(#"product 1: update #1 "Renamed""#) && dry.output.contains(#"product 2: create new id "Fresh""#))
            let dryFaulty = try await shopctl.run(["--json", "admin", "products", "import", "--dry-run", faulty])
            #expect(dryFaulty.status == 4, "\(dryFaulty)")
            let planned = try ShopctlJSON.decode(ProductImportReport.Plan.self, dryFaulty.output)
            #expect(planned.failed.map(\.index) == [0, 2] && planned.created == 1)
            #expect(try await productCount(shopctl) == before + 1)
            let product1 = try await shopctl.succeed(["--json", "products", "show", "1"])
            #expect(try ShopctlJSON.decode(ProductResponse.self, product1.output).product.title != "Renamed")
        }
    }

    @Test("catalog-svc names every problem of a product in the user's words; call takes describe's names and --api-key")
    func serverMessagesAndCall() async throws {
        try await withShopctlStack { stack in
            let shopctl = try stack.shopctl()
            try await shopctl.waitUntilServing()

            for name in [
                "CatalogService/GetProduct", "catalog.GetProduct", "/shop.catalog.v1.CatalogService/GetProduct",
                "shop.catalog.v1.CatalogService/GetProduct",
            ] {
                let got = try await shopctl.succeed(["--json", "call", name, #"{"id":3}"#])
                #expect(try ShopctlJSON.decode(ProductResponse.self, got.output).product.id == 3, "\(name): \(got)")
            }

            // --api-key reaches an admin method; the refusal lists every problem, with field paths in the details only.
            let bad = #"{"product":{"title":" ","description":"","category":"office","price":{"amount":-1,"currency":"USD"},"image":"ftp://x","rating":{"rate":0,"count":0},"stock":0}}"#
            let refused = try await shopctl.run(["call", "CatalogService/UpsertProduct", "--api-key", stack.adminKey, bad])
            #expect(refused.status == 4, "\(refused)")
            #expect(
                refused.errors.contains(
                    "INVALID_PRODUCT: The title is empty; the price is negative; the image is not an http(s) URL of at most 2048 characters."),
                "\(refused)")
            #expect(!refused.errors.contains("product.title"), "\(refused)")
            let noKey = try await shopctl.run(["call", "CatalogService/UpsertProduct", bad])
            #expect(noKey.errors.contains("MISSING_API_KEY"), "\(noKey)")

            // ImportProducts straight from call: the wire index stays zero-based, the reason lists all problems.
            let stream = [
                #"{"product":{"title":"Ok","description":"","category":"office","price":{"amount":1,"currency":"USD"},"image":"","rating":{"rate":0,"count":0},"stock":0}}"#,
                #"{"product":{"title":"","description":"","category":"","price":{"amount":1,"currency":"USD"},"image":"","rating":{"rate":9,"count":0},"stock":0}}"#,
            ].joined(separator: "\n")
            let imported = try await shopctl.succeed(
                ["--json", "call", "catalog.ImportProducts", "-"], input: stream, environment: ["SHOP_ADMIN_API_KEY": stack.adminKey])
            let response = try ShopctlJSON.decode(ImportProductsResponse.self, imported.output)
            #expect(response.created == 1)
            #expect(
                response.failed == [
                    ImportFailure(index: 1, reason: "The title is empty; the category is empty; the rating 9.0 is not between 0 and 5.")
                ])

            let product = try await shopctl.succeed(["describe", "Product"])
            #expect(product.output.hasPrefix("message Product\n") && product.output.contains("image"), "\(product)")
            let request = try await shopctl.succeed(["describe", "listproductsrequest"])
            #expect(request.output.hasPrefix("message ListProductsRequest\n") && request.output.contains("pageToken"), "\(request)")
        }
    }
}
