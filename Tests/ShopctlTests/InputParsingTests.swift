import Contracts
import Foundation
import RPC
import Testing

@testable import shopctl

/// The small parsers behind the commands: method names, `call` bodies and headers, product
/// files, basket item prefixes, passwords from standard input.
@Suite("Input parsing: methods, bodies, product files, item ids, passwords")
struct InputParsingTests {
    @Test(
        "reads a method as service/method, with a leading slash, or dotted",
        arguments: [
            "shop.catalog.v1.CatalogService/GetProduct", "/shop.catalog.v1.CatalogService/GetProduct",
            "shop.catalog.v1.CatalogService.GetProduct", " shop.catalog.v1.CatalogService/GetProduct ",
        ])
    func methodNames(text: String) throws {
        let name = try #require(MethodName(text))
        #expect(name.path == "/shop.catalog.v1.CatalogService/GetProduct")
        #expect(KnownMethods.info(for: name)?.kind == .unary)
    }

    @Test("refuses what names no method", arguments: ["", "GetProduct", "/a/b/c", "svc/", "/method", "a/b.c"])
    func badMethodNames(text: String) {
        #expect(MethodName(text) == nil)
    }

    @Test("knows the streaming kind of the contract's methods; unknown ones are called as unary")
    func kinds() throws {
        #expect(KnownMethods.info(for: try #require(MethodName("shop.basket.v1.BasketService/WatchBasket")))?.kind == .serverStreaming)
        #expect(
            KnownMethods.info(for: try #require(MethodName("shop.catalog.v1.CatalogService/ImportProducts")))?.kind
                == .clientStreaming)
        #expect(KnownMethods.info(for: try #require(MethodName("x.y.v1.Nothing/Here"))) == nil)
    }

    @Test("a unary body is sent as given; a client stream is split into messages")
    func bodies() throws {
        #expect(try CallCommand.messages(from: " {\"id\": 1}\n", kind: .unary) == [Data("{\"id\": 1}".utf8)])
        #expect(try CallCommand.messages(from: "", kind: .serverStreaming) == [Data("{}".utf8)])
        let array = try CallCommand.messages(from: "[{\"a\":1},{\"b\":[2]}]", kind: .clientStreaming)
        #expect(array.map { String(decoding: $0, as: UTF8.self) } == ["{\"a\":1}", "{\"b\":[2]}"])
        let lines = try CallCommand.messages(from: "{\"a\":1}\n\n  {\"b\":2}\n", kind: .clientStreaming)
        #expect(lines.map { String(decoding: $0, as: UTF8.self) } == ["{\"a\":1}", "{\"b\":2}"])
        #expect(throws: ShopctlError.self) { try CallCommand.messages(from: "[1,", kind: .clientStreaming) }
    }

    @Test("headers are key:value, split at the first colon")
    func headers() {
        #expect(CallCommand.metadataEntry("X-Trace: a:b") ?? ("", "") == ("x-trace", "a:b"))
        #expect(CallCommand.metadataEntry("no-colon") == nil)
        #expect(CallCommand.metadataEntry(":value") == nil)
    }

    @Test("product files are JSON arrays or JSON lines, bare or wrapped")
    func productFiles() throws {
        let bare = #"{"title":"A","description":"","category":"c","price":{"amount":100,"currency":"USD"},"image":"","rating":{"rate":1,"count":1},"stock":1}"#
        let wrapped = #"{"product":{"id":7,"title":"B","description":"d","category":"c","price":{"amount":250,"currency":"USD"},"image":"","rating":{"rate":2,"count":3},"stock":0}}"#
        let fromLines = try ProductFile.products(of: ProductFile.entries(from: Data("\(bare)\n\n\(wrapped)\n".utf8)))
        #expect(fromLines.map(\.title) == ["A", "B"])
        #expect(fromLines.map(\.id) == [0, 7])
        let fromArray = try ProductFile.products(of: ProductFile.entries(from: Data("[\(bare), \(wrapped)]".utf8)))
        #expect(fromArray == fromLines)
        let error = #expect(throws: ShopctlError.self) {
            try ProductFile.products(of: ProductFile.entries(from: Data("\(bare)\n{\"title\": 3}\n".utf8)))
        }
        #expect(error?.problems == ["product 2: The title is not a string; the category is missing; the price is missing."], "\(String(describing: error))")
        #expect(error?.status == .rejected)
    }

    @Test("an item is named by a unique prefix of its id")
    func itemPrefixes() throws {
        func item(_ id: String) -> BasketItem {
            BasketItem(
                id: id, productId: 1, productTitle: "T", unitPrice: .zero(currency: "USD"), imageURL: "", count: 1,
                lineTotal: .zero(currency: "USD"))
        }
        let basket = Basket(
            items: [item("1a2b3c4d-0000-0000-0000-000000000000"), item("1a2bffff-0000-0000-0000-000000000000")],
            itemCount: 2, total: .zero(currency: "USD"), version: 1, updatedAt: "")
        #expect(try BasketCommand.matchItem("1A2B3", in: basket) == "1a2b3c4d-0000-0000-0000-000000000000")
        #expect(throws: ShopctlError.self) { try BasketCommand.matchItem("1a2b", in: basket) }
        let missing = #expect(throws: ShopctlError.self) { try BasketCommand.matchItem("ffff", in: basket) }
        #expect(missing?.reason == "ITEM_NOT_FOUND")
    }

    @Test("--password-stdin reads one password per line; a new password is not asked twice")
    func passwordsFromStandardInput() throws {
        var reader = PasswordReader(standardInput: "current secret\r\nnew secret\n")
        #expect(try reader.read(prompt: "Current password") == "current secret")
        #expect(try reader.readNew(prompt: "New password") == "new secret")
        #expect(throws: ShopctlError.self) { try reader.read(prompt: "More") }
        var empty = PasswordReader(standardInput: "\n")
        #expect(throws: ShopctlError.self) { try empty.read(prompt: "Password") }
    }

    @Test("describe finds a service by full name, last part or a piece of it")
    func describeMatching() {
        let services = ["shop.catalog.v1.CatalogService", "shop.basket.v1.BasketService", "grpc.health.v1.Health"].map {
            ServiceDescription(name: $0, methods: [])
        }
        #expect(DescribeCommand.matching("shop.basket.v1.BasketService", in: services).map(\.name) == ["shop.basket.v1.BasketService"])
        #expect(DescribeCommand.matching("catalogservice", in: services).map(\.name) == ["shop.catalog.v1.CatalogService"])
        #expect(DescribeCommand.matching("shop", in: services).count == 2)
        #expect(DescribeCommand.matching("nothing", in: services).isEmpty)
    }
}
