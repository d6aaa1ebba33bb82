import ArgumentParser
import Contracts
import RPC
import Testing

@testable import shopctl

/// `call` takes every form of a method name `describe` prints, through the one set of rules
/// both use (``APINames``), and an unknown or ambiguous name lists the close ones (issue 27, point 6).
@Suite("call and describe: one way to name a method")
struct CallMethodNameTests {
    @Test(
        "call takes the short and the full forms of a method",
        arguments: [
            "CatalogService/GetProduct", "catalog.GetProduct", "catalog/getproduct", "/shop.catalog.v1.CatalogService/GetProduct",
            "shop.catalog.v1.CatalogService/GetProduct", "shop.catalog.v1.CatalogService.GetProduct", " CATALOGSERVICE/GetProduct ",
        ])
    func shortForms(text: String) throws {
        #expect(try CallCommand.resolve(text).path == CatalogContract.getProduct.path)
    }

    @Test("the forms parse as a command line, with --api-key")
    func commandLine() throws {
        let command = try #require(
            try Shopctl.parseAsRoot(["call", "--api-key", "k", "catalog.UpsertProduct", "{}"]) as? CallCommand)
        #expect(command.key.key == "k")
        #expect(try CallCommand.resolve(command.method).path == CatalogContract.upsertProduct.path)
    }

    @Test("a method the contract does not know is refused with the close matches, naming the form describe prints")
    func unknown() throws {
        let typo = #expect(throws: ShopctlError.self) { try CallCommand.resolve("CatalogService/GetProdct") }
        #expect(typo?.status == .usage)
        #expect(typo?.message.contains("Did you mean CatalogService/GetProduct") == true, "\(String(describing: typo))")
        let wrongService = #expect(throws: ShopctlError.self) { try CallCommand.resolve("basket.GetProduct") }
        #expect(wrongService?.message.contains("CatalogService/GetProduct") == true, "\(String(describing: wrongService))")
        let typoInFullName = #expect(throws: ShopctlError.self) {
            try CallCommand.resolve("shop.catalog.v1.CatalogService/ListProdcts")
        }
        #expect(typoInFullName?.message.contains("CatalogService/ListProducts") == true)
        #expect(throws: ShopctlError.self) { try CallCommand.resolve("GetProduct") }
    }

    @Test("a fully qualified method of a service this shopctl does not know is sent as given")
    func unknownService() throws {
        #expect(try CallCommand.resolve("shop.reviews.v1.ReviewService/ListReviews").path == "/shop.reviews.v1.ReviewService/ListReviews")
    }

    @Test("a name that fits several methods is ambiguous and lists them")
    func ambiguous() {
        let methods = [
            APINames.Method(service: "shop.a.v1.ThingService", method: "Get"),
            APINames.Method(service: "shop.b.v1.OtherThingService", method: "Get"),
        ]
        #expect(APINames.method("thing.Get", in: methods) == .ambiguous(methods))
        #expect(APINames.method("OtherThingService/get", in: methods) == .found(methods[1]))
        #expect(APINames.method("a.thing/Got", in: methods) == .unknown(closeMatches: methods))
        #expect(APINames.method("thing.Delete", in: methods) == .unknown(closeMatches: []))
    }
}
