internal import Foundation
internal import RPC

/// The body of one OTLP/HTTP JSON trace export (`ExportTraceServiceRequest`,
/// https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): the spans of one process
/// under its resource (`service.name`) and one instrumentation scope.
///
/// The JSON follows the specification's mapping of the protobuf messages: field names in
/// lowerCamelCase, trace and span ids as lower-case hexadecimal (not base64), enums as
/// integers, 64-bit integers (times, `intValue`) as decimal strings; absent fields are left out.
struct OTLPTraceRequest: Encodable {
    /// One resource with its scope's spans.
    let resourceSpans: [ResourceSpans]

    /// The spans of `spans`, exported by the program `serviceName`.
    init(spans: [SpanRecord], serviceName: String) {
        resourceSpans = [
            ResourceSpans(
                resource: Resource(attributes: [KeyValue("service.name", string: serviceName)]),
                scopeSpans: [ScopeSpans(scope: Scope(name: Self.scopeName), spans: spans.map(Span.init))])
        ]
    }

    /// The instrumentation scope every span is reported under.
    static let scopeName = "storefront"

    /// The body as JSON bytes.
    func encoded() throws -> [UInt8] {
        // Encoding these types only fails on a programming error (there is no Double in them).
        [UInt8](try JSONCodec.shared.encode(self))
    }

    /// `ResourceSpans`: who produced the spans.
    struct ResourceSpans: Encodable {
        let resource: Resource
        let scopeSpans: [ScopeSpans]
    }

    /// `Resource`: the process's attributes.
    struct Resource: Encodable {
        let attributes: [KeyValue]
    }

    /// `ScopeSpans`: the spans of one instrumentation scope.
    struct ScopeSpans: Encodable {
        let scope: Scope
        let spans: [Span]
    }

    /// `InstrumentationScope`.
    struct Scope: Encodable {
        let name: String
    }

    /// `KeyValue`: one attribute.
    struct KeyValue: Encodable {
        let key: String
        let value: AnyValue

        /// A string attribute.
        init(_ key: String, string: String) {
            self.key = key
            value = AnyValue(stringValue: string)
        }

        /// An integer attribute.
        init(_ key: String, int: Int) {
            self.key = key
            value = AnyValue(intValue: String(int))
        }
    }

    /// `AnyValue`, a one-of: exactly one field is set.
    struct AnyValue: Encodable {
        var stringValue: String?
        /// An `int64`, so a decimal string in JSON.
        var intValue: String?
    }

    /// `Status`: set only for a span that failed (`STATUS_CODE_ERROR`); others stay unset.
    struct Status: Encodable {
        /// `STATUS_CODE_ERROR`.
        static let errorCode = 2

        let code: Int
        let message: String
    }
}

extension OTLPTraceRequest {
    /// `Span`: one call served or made, named and described per OpenTelemetry's RPC semantic
    /// conventions for gRPC (https://opentelemetry.io/docs/specs/semconv/rpc/grpc/).
    struct Span: Encodable {
        let traceId: String
        let spanId: String
        let parentSpanId: String?
        let traceState: String?
        /// The W3C trace flags in the low byte.
        let flags: UInt32
        /// The method, `package.Service/Method`.
        let name: String
        /// `SPAN_KIND_SERVER` (2) or `SPAN_KIND_CLIENT` (3).
        let kind: Int
        let startTimeUnixNano: String
        let endTimeUnixNano: String
        let attributes: [KeyValue]
        let status: Status?

        /// `SPAN_KIND_SERVER`.
        static let serverKind = 2
        /// `SPAN_KIND_CLIENT`.
        static let clientKind = 3

        /// The span of `record`.
        init(_ record: SpanRecord) {
            traceId = record.trace.traceIDText
            spanId = record.trace.spanIDText
            parentSpanId = record.trace.parentSpanIDText
            traceState = record.trace.traceState
            flags = UInt32(record.trace.flags)
            name = record.path.hasPrefix("/") ? String(record.path.dropFirst()) : record.path
            kind = record.kind == .server ? Self.serverKind : Self.clientKind
            startTimeUnixNano = String(record.startNanoseconds)
            endTimeUnixNano = String(max(record.startNanoseconds, record.endNanoseconds))
            attributes = Self.attributes(of: record)
            if let code = record.code, Self.isError(code, kind: record.kind) {
                status = Status(code: Status.errorCode, message: code.name)
            } else {
                status = nil
            }
        }

        /// `rpc.system`, `rpc.service` and `rpc.method` (when the path names a method),
        /// `rpc.grpc.status_code`, and the other end: `server.address`/`server.port` of a
        /// client span, `client.address`/`client.port` of a server span.
        static func attributes(of record: SpanRecord) -> [KeyValue] {
            var attributes = [KeyValue("rpc.system", string: "grpc")]
            let parts = record.path.split(separator: "/", omittingEmptySubsequences: true)
            if record.path.hasPrefix("/"), parts.count == 2 {
                attributes.append(KeyValue("rpc.service", string: String(parts[0])))
                attributes.append(KeyValue("rpc.method", string: String(parts[1])))
            }
            attributes.append(KeyValue("rpc.grpc.status_code", int: record.code?.rawValue ?? 0))
            let side = record.kind == .client ? "server" : "client"
            let (host, port) = hostAndPort(record.peer)
            attributes.append(KeyValue("\(side).address", string: host))
            if let port { attributes.append(KeyValue("\(side).port", int: port)) }
            return attributes
        }

        /// Whether a span ending with `code` failed, as the gRPC conventions say: any code on
        /// the client's side; on the server's only the codes that mean the server failed —
        /// the rest are the caller's mistakes or outcomes it asked for.
        static func isError(_ code: RPCCode, kind: SpanRecord.Kind) -> Bool {
            kind == .client || serverErrorCodes.contains(code)
        }

        /// The codes that mark a server span as failed.
        static let serverErrorCodes: Set<RPCCode> = [.unknown, .deadlineExceeded, .unimplemented, .internal, .unavailable, .dataLoss]

        /// `host:port` (`[v6]:port` for IPv6) split; the whole text and no port when it has none.
        static func hostAndPort(_ peer: String) -> (String, Int?) {
            guard let colon = peer.lastIndex(of: ":"), let port = Int(peer[peer.index(after: colon)...]) else { return (peer, nil) }
            var host = peer[..<colon]
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            return (String(host), port)
        }
    }
}
