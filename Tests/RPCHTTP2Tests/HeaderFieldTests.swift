@testable import RPCHTTP2
import Testing

@Suite("Header fields")
struct HeaderFieldTests {
    private func neverIndexed(_ name: String) -> Bool {
        Array(name.utf8).withUnsafeBufferPointer { HTTP2Session.isNeverIndexed($0) }
    }

    @Test(
        "secrets and per-call values are never indexed by HPACK",
        arguments: ["authorization", "x-api-key", "grpc-timeout", "x-request-id", "traceparent", "tracestate", "idempotency-key"])
    func neverIndexedNames(name: String) {
        #expect(neverIndexed(name))
    }

    @Test(
        "headers that repeat call after call are indexed",
        arguments: [":method", ":path", ":authority", "content-type", "te", "user-agent", "x-custom", "authorizatio", "x-api-keys", ""])
    func indexedNames(name: String) {
        #expect(!neverIndexed(name))
    }

    private func contentType(_ text: String) -> String {
        Array(text.utf8).withUnsafeBytes { KnownHeader.contentType($0) }
    }

    @Test("content types read from bytes keep their text, common or not")
    func contentTypes() {
        for text in ["application/grpc+json", "application/grpc", "application/grpc+proto", "text/plain", "application/grpc+jso", ""] {
            #expect(contentType(text) == text)
        }
    }

    @Test("bytes match a string only when every byte is the same")
    func matches() {
        func matches(_ bytes: String, _ text: String) -> Bool {
            Array(bytes.utf8).withUnsafeBytes { KnownHeader.matches($0, text) }
        }
        let path = "/shop.catalog.v1.CatalogService/GetProduct"
        #expect(matches(path, path))
        #expect(!matches("/shop.catalog.v1.CatalogService/GetProducts", path))
        #expect(!matches("/shop.catalog.v1.CatalogService/GetProduc", path))
        #expect(!matches("/shop.catalog.v1.CatalogService/GetProduct".uppercased(), path))
        #expect(matches("", ""))
        #expect(!matches("x", ""))
    }
}
