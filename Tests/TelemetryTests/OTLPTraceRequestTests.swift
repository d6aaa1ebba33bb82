import Foundation
import RPC
@testable import Telemetry
import Testing

/// The JSON the span exporter sends (``OTLPTraceRequest``), read back with Foundation's parser:
/// the OTLP/JSON mapping (hex ids, integer enums, 64-bit integers as strings) and the gRPC
/// semantic conventions' names, attributes and error statuses.
@Suite("OTLP/JSON trace request")
struct OTLPTraceRequestTests {
    /// The trace of every span here, as `traceparent` spells it.
    static let traceIDText = "0af7651916cd43dd8448eb211c80319c"
    /// The caller's span, the parent of the served root.
    static let callerSpan: UInt64 = 0x00f0_67aa_0ba9_02b7
    /// The served call's span.
    static let served = TraceContext(
        traceID: (0x0af7_6519_16cd_43dd, 0x8448_eb21_1c80_319c), spanID: 0xb7ad_6b71_6920_3331, parentSpanID: callerSpan,
        traceState: "congo=t61rcWkgMzE")

    /// A span of `path` with these fields, lasting 1.5 ms from a fixed start.
    static func record(_ path: String, _ kind: SpanRecord.Kind, _ trace: TraceContext, code: RPCCode? = nil, peer: String) -> SpanRecord {
        SpanRecord(
            path: path, kind: kind, trace: trace, startNanoseconds: 1_700_000_000_123_456_789,
            endNanoseconds: 1_700_000_000_124_956_789, code: code, peer: peer)
    }

    /// The encoded request's spans, by `spanId`, and its one resource and scope.
    static func encode(_ records: [SpanRecord], service: String = "gateway") throws -> (
        spans: [String: [String: Any]], resource: [String: Any], scope: [String: Any]
    ) {
        let body = try OTLPTraceRequest(spans: records, serviceName: service).encoded()
        let root = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let resourceSpans = try #require(root["resourceSpans"] as? [[String: Any]])
        try #require(resourceSpans.count == 1)
        let scopeSpans = try #require(resourceSpans[0]["scopeSpans"] as? [[String: Any]])
        try #require(scopeSpans.count == 1)
        let spans = try #require(scopeSpans[0]["spans"] as? [[String: Any]])
        var bySpanID: [String: [String: Any]] = [:]
        for span in spans { bySpanID[try #require(span["spanId"] as? String)] = span }
        return (
            bySpanID, try #require(resourceSpans[0]["resource"] as? [String: Any]), try #require(scopeSpans[0]["scope"] as? [String: Any])
        )
    }

    /// The attributes of a span (or resource) object, key to value object.
    static func attributes(_ object: [String: Any]) throws -> [String: [String: Any]] {
        var result: [String: [String: Any]] = [:]
        for entry in try #require(object["attributes"] as? [[String: Any]]) {
            result[try #require(entry["key"] as? String)] = try #require(entry["value"] as? [String: Any])
        }
        return result
    }

    @Test("a served call and the call it made: one resource named by the program, scope storefront, hex ids linking child to parent, kinds, times as decimal strings")
    func spanTree() throws {
        let made = Self.served.child()
        let encoded = try Self.encode([
            Self.record("/shop.order.v1.OrderService/PlaceOrder", .server, Self.served, peer: "127.0.0.1:50312"),
            Self.record("/shop.order.v1.OrderService/PlaceOrder", .client, made, peer: "127.0.0.1:7004"),
        ])
        #expect(try Self.attributes(encoded.resource)["service.name"]?["stringValue"] as? String == "gateway")
        #expect(encoded.scope["name"] as? String == "storefront")

        let server = try #require(encoded.spans["b7ad6b7169203331"])
        #expect(server["traceId"] as? String == Self.traceIDText)
        #expect(server["parentSpanId"] as? String == "00f067aa0ba902b7")
        #expect(server["traceState"] as? String == "congo=t61rcWkgMzE")
        #expect(server["name"] as? String == "shop.order.v1.OrderService/PlaceOrder")
        #expect(server["kind"] as? Int == 2)
        #expect(server["startTimeUnixNano"] as? String == "1700000000123456789")
        #expect(server["endTimeUnixNano"] as? String == "1700000000124956789")
        #expect(server["flags"] as? Int == 1)
        #expect(server["status"] == nil, "an OK span's status stays unset")

        let client = try #require(encoded.spans[made.spanIDText])
        #expect(made.spanIDText.count == 16 && made.spanIDText.allSatisfy(\.isHexDigit))
        #expect(client["traceId"] as? String == Self.traceIDText)
        #expect(client["parentSpanId"] as? String == "b7ad6b7169203331")
        #expect(client["kind"] as? Int == 3)
    }

    @Test("the root of a trace has no parentSpanId")
    func root() throws {
        let root = TraceContext(traceID: (1, 2), spanID: 3, parentSpanID: nil)
        let span = try #require(try Self.encode([Self.record("/shop.catalog.v1.CatalogService/GetProduct", .server, root, peer: "10.0.0.1:4")]).spans["0000000000000003"])
        #expect(span["traceId"] as? String == "00000000000000010000000000000002")
        #expect(span["parentSpanId"] == nil)
        #expect(span["traceState"] == nil)
    }

    @Test("gRPC attributes: system, service, method, the status code as an int64 string, and the other end's address and port")
    func attributes() throws {
        let made = Self.served.child()
        let encoded = try Self.encode([
            Self.record("/shop.order.v1.OrderService/PlaceOrder", .server, Self.served, code: .notFound, peer: "[::1]:50312"),
            Self.record("/shop.basket.v1.BasketService/GetBasket", .client, made, peer: "basket.internal:7003"),
        ])
        let server = try Self.attributes(try #require(encoded.spans["b7ad6b7169203331"]))
        #expect(server["rpc.system"]?["stringValue"] as? String == "grpc")
        #expect(server["rpc.service"]?["stringValue"] as? String == "shop.order.v1.OrderService")
        #expect(server["rpc.method"]?["stringValue"] as? String == "PlaceOrder")
        #expect(server["rpc.grpc.status_code"]?["intValue"] as? String == "5")
        #expect(server["client.address"]?["stringValue"] as? String == "::1")
        #expect(server["client.port"]?["intValue"] as? String == "50312")
        #expect(server["server.address"] == nil)

        let client = try Self.attributes(try #require(encoded.spans[made.spanIDText]))
        #expect(client["rpc.service"]?["stringValue"] as? String == "shop.basket.v1.BasketService")
        #expect(client["rpc.method"]?["stringValue"] as? String == "GetBasket")
        #expect(client["rpc.grpc.status_code"]?["intValue"] as? String == "0")
        #expect(client["server.address"]?["stringValue"] as? String == "basket.internal")
        #expect(client["server.port"]?["intValue"] as? String == "7003")
        #expect(client["client.address"] == nil)
    }

    @Test("status ERROR with the code's name: on a server for the codes that mean it failed, on a client for every code",
          arguments: [
            (SpanRecord.Kind.server, RPCCode.internal, true), (.server, .unknown, true), (.server, .unavailable, true),
            (.server, .deadlineExceeded, true), (.server, .unimplemented, true), (.server, .dataLoss, true),
            (.server, .notFound, false), (.server, .invalidArgument, false), (.server, .unauthenticated, false),
            (.server, .failedPrecondition, false), (.client, .notFound, true), (.client, .invalidArgument, true),
            (.client, .unavailable, true),
          ] as [(SpanRecord.Kind, RPCCode, Bool)])
    func errorStatus(kind: SpanRecord.Kind, code: RPCCode, isError: Bool) throws {
        let span = try #require(try Self.encode([Self.record("/a.B/C", kind, Self.served, code: code, peer: "h:1")]).spans["b7ad6b7169203331"])
        let status = span["status"] as? [String: Any]
        if isError {
            #expect(status?["code"] as? Int == 2)
            #expect(status?["message"] as? String == code.name)
        } else {
            #expect(status == nil)
        }
        #expect(try Self.attributes(span)["rpc.grpc.status_code"]?["intValue"] as? String == String(code.rawValue))
    }

    @Test("a path that names no method keeps its name and gets no rpc.service or rpc.method")
    func otherPath() throws {
        let span = try #require(try Self.encode([Self.record("_OTHER", .server, Self.served, peer: "h:1")]).spans["b7ad6b7169203331"])
        #expect(span["name"] as? String == "_OTHER")
        let attributes = try Self.attributes(span)
        #expect(attributes["rpc.service"] == nil && attributes["rpc.method"] == nil)
        #expect(attributes["rpc.system"]?["stringValue"] as? String == "grpc")
    }
}
