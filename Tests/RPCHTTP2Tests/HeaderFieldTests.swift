@testable import RPCHTTP2
import RPC
import Testing

@Suite("Header fields")
struct HeaderFieldTests {
    private func neverIndexed(_ name: String) -> Bool {
        KnownHeader.isNeverIndexed(name)
    }

    @Test(
        "secrets and per-call values are never indexed by HPACK",
        arguments: ["authorization", "x-api-key", "grpc-timeout", "x-request-id", "traceparent", "tracestate", "idempotency-key"])
    func neverIndexedNames(name: String) {
        #expect(neverIndexed(name))
    }

    @Test(
        "headers that repeat call after call are indexed",
        arguments: [
            ":method", ":path", ":authority", "content-type", "te", "user-agent", "x-custom", "authorizatio", "x-api-keys", "",
            // the same lengths as never-indexed names, one byte off
            "x-api-kez", "tracestatf", "traceparenu", "x-request-ie", "grpc-timeouu", "authorizatioo", "idempotency-kez",
        ])
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

@Suite("Request head")
struct RequestHeadTests {
    private func fields(_ head: RequestHead) -> [String] {
        var fields: [String] = []
        head.forEachField(&fields) { fields, name, value, _ in fields.append("\(name): \(value)") }
        return fields
    }

    private func neverIndexedFields(_ head: RequestHead) -> [String] {
        var names: [String] = []
        head.forEachField(&names) { names, name, _, neverIndexed in if neverIndexed { names.append(name) } }
        return names
    }

    @Test("the gRPC fields come first, then the timeout, then the caller's custom metadata in order")
    func order() {
        var metadata: Metadata = ["x-request-id": "abc", "authorization": "Bearer t"]
        metadata.add("x-custom", "1")
        metadata.add("x-custom", "2")
        let head = RequestHead(path: "/a.B/C", authority: "127.0.0.1:7002", timeout: "100m", metadata: metadata)
        #expect(fields(head) == [
            ":method: POST", ":scheme: http", ":path: /a.B/C", ":authority: 127.0.0.1:7002",
            "content-type: application/grpc+json", "te: trailers", "user-agent: storefront-rpc/1", "grpc-timeout: 100m",
            "x-request-id: abc", "authorization: Bearer t", "x-custom: 1", "x-custom: 2",
        ])
    }

    @Test("the timeout, secrets and per-call metadata are marked never-indexed; the fixed fields and other metadata are not")
    func neverIndexedMarks() {
        let metadata: Metadata = [
            "x-request-id": "abc", "authorization": "Bearer t", "x-custom": "1", "idempotency-key": "k", "traceparent": "00-1",
        ]
        let head = RequestHead(path: "/a.B/C", authority: "127.0.0.1:7002", timeout: "100m", metadata: metadata)
        #expect(neverIndexedFields(head) == ["grpc-timeout", "x-request-id", "authorization", "idempotency-key", "traceparent"])
        let plain = RequestHead(path: "/a.B/C", authority: "h:1", timeout: nil, metadata: ["x-custom": "1"])
        #expect(neverIndexedFields(plain).isEmpty)
    }

    @Test("a request id given apart from the metadata is sent after the timeout, never indexed, in place of the metadata's own")
    func requestIDApart() {
        let metadata: Metadata = ["x-custom": "1", "x-request-id": "from-metadata", "authorization": "Bearer t"]
        let head = RequestHead(
            path: "/a.B/C", authority: "h:1", timeout: "100m", metadata: metadata, requestID: RequestID("given-1"))
        #expect(fields(head) == [
            ":method: POST", ":scheme: http", ":path: /a.B/C", ":authority: h:1",
            "content-type: application/grpc+json", "te: trailers", "user-agent: storefront-rpc/1", "grpc-timeout: 100m",
            "x-request-id: given-1", "x-custom: 1", "authorization: Bearer t",
        ])
        #expect(neverIndexedFields(head) == ["grpc-timeout", "x-request-id", "authorization"])
        let made = RequestID.next()
        let plain = RequestHead(path: "/a.B/C", authority: "h:1", timeout: nil, metadata: Metadata(), requestID: made)
        #expect(fields(plain).last == "x-request-id: \(made)")
    }

    @Test("without a deadline there is no grpc-timeout, and protocol names in the metadata are not sent")
    func noTimeoutNoProtocolNames() {
        let metadata: Metadata = [
            "grpc-timeout": "1S", "content-type": "text/plain", "te": "x", ":path": "/evil", "user-agent": "me", "keep": "k",
        ]
        let head = RequestHead(path: "/a.B/C", authority: "h:1", timeout: nil, metadata: metadata)
        #expect(fields(head) == [
            ":method: POST", ":scheme: http", ":path: /a.B/C", ":authority: h:1",
            "content-type: application/grpc+json", "te: trailers", "user-agent: storefront-rpc/1", "keep: k",
        ])
    }

    @Test("the call's own span is sent after the request id, never indexed, in place of the metadata's traceparent and tracestate")
    func traceApart() throws {
        let metadata: Metadata = ["traceparent": "00-1", "x-custom": "1", "tracestate": "caller=1"]
        let span = try #require(TraceContext.parse(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
            .child()
        let head = RequestHead(
            path: "/a.B/C", authority: "h:1", timeout: nil, metadata: metadata, requestID: RequestID("given-1"), trace: span)
        #expect(fields(head) == [
            ":method: POST", ":scheme: http", ":path: /a.B/C", ":authority: h:1",
            "content-type: application/grpc+json", "te: trailers", "user-agent: storefront-rpc/1",
            "x-request-id: given-1", "traceparent: \(span.traceparent)", "x-custom: 1",
        ])
        #expect(neverIndexedFields(head) == ["x-request-id", "traceparent"])
        // A span carrying the caller's state sends it after its traceparent.
        let stated = TraceContext.serverSpan(
            traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "vendor=1").child()
        let withState = RequestHead(path: "/a.B/C", authority: "h:1", timeout: nil, metadata: metadata, trace: stated)
        #expect(fields(withState).suffix(3) == ["traceparent: \(stated.traceparent)", "tracestate: vendor=1", "x-custom: 1"])
        #expect(neverIndexedFields(withState) == ["traceparent", "tracestate"])
    }

    @Test("a gRPC content type is told by its prefix, byte for byte", arguments: [
        ("application/grpc", true, false), ("application/grpc+json", true, false), ("application/grpc; charset=utf-8", true, false),
        ("application/grpc-web+json", true, true), ("application/grpc-web", true, true), ("application/grp", false, false),
        ("", false, false), ("Application/grpc", false, false), ("application/json", false, false), ("application/grpc-wé", true, false),
    ])
    func grpcContentTypes(contentType: String, isGRPC: Bool, isGRPCWeb: Bool) {
        #expect(KnownHeader.isGRPC(contentType: contentType) == isGRPC)
        #expect(KnownHeader.isGRPCWeb(contentType: contentType) == isGRPCWeb)
    }
}
