#if canImport(Glibc)
internal import Glibc
#endif

/// Request header names the server reads, recognized from raw bytes without allocating.
enum KnownHeader {
    case path, method, contentType, timeout, encoding
    /// Protocol headers with nothing to keep (`:scheme`, `:authority`, `te`, `user-agent`…).
    case ignored
    /// Anything else: possibly custom metadata.
    case other

    init(_ name: UnsafeRawBufferPointer) {
        switch name.count {
        case 2 where Self.equals(name, "te"): self = .ignored
        case 5 where Self.equals(name, ":path"): self = .path
        case 7 where Self.equals(name, ":method"): self = .method
        case 7 where Self.equals(name, ":scheme"): self = .ignored
        case 10 where Self.equals(name, ":authority"): self = .ignored
        case 10 where Self.equals(name, "user-agent"): self = .ignored
        case 12 where Self.equals(name, "content-type"): self = .contentType
        case 12 where Self.equals(name, "grpc-timeout"): self = .timeout
        case 13 where Self.equals(name, "grpc-encoding"): self = .encoding
        case 14 where Self.equals(name, "content-length"): self = .ignored
        case 20 where Self.equals(name, "grpc-accept-encoding"): self = .ignored
        default: self = .other
        }
    }

    /// Whether a response header name is `:status` (the client's one protocol header to read).
    static func isStatus(_ name: UnsafeRawBufferPointer) -> Bool { name.count == 7 && equals(name, ":status") }

    /// Whether HPACK must never add a request header to its tables: secrets (a shared
    /// compression table is what CRIME-style attacks probe) and values that are new on every
    /// call (indexing them would only evict the entries that do repeat, on both ends). Names
    /// are lower-case metadata keys; only metadata entries are looked up here (the fixed
    /// request fields carry their answer, see ``RequestHead/forEachField(_:_:)``).
    static func isNeverIndexed(_ name: String) -> Bool {
        switch name {
        case "authorization", "x-api-key", "grpc-timeout", "x-request-id", "traceparent", "tracestate", "idempotency-key":
            true
        default:
            false
        }
    }

    /// Whether a trailer is `grpc-status: 0`, the one nearly every call ends with.
    static func isStatusOK(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool {
        value.count == 1 && value[0] == UInt8(ascii: "0") && name.count == 11 && equals(name, "grpc-status")
    }

    /// A decimal value read from bytes (an HTTP status); 0 when it is not one.
    static func decimal(_ value: UnsafeRawBufferPointer) -> Int {
        guard !value.isEmpty, value.count <= 9 else { return 0 }
        var result = 0
        for byte in value {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return 0 }
            result = result * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return result
    }

    /// A `content-type` value as a string, without allocating for the usual gRPC ones.
    static func contentType(_ value: UnsafeRawBufferPointer) -> String {
        if equals(value, "application/grpc+json") { return "application/grpc+json" }
        if equals(value, "application/grpc") { return "application/grpc" }
        return String(decoding: value, as: UTF8.self)
    }

    /// Whether a `content-type` is gRPC's: `application/grpc`, alone or with a `+` suffix (or
    /// anything else after it, as gRPC implementations accept). Compared as bytes, as
    /// `Metadata.isCustom` compares its prefixes: `hasPrefix` compares grapheme clusters,
    /// several times the cost, on every call of both sides.
    static func isGRPC(contentType: String) -> Bool {
        hasPrefix(contentType, "application/grpc")
    }

    /// Whether a content type is gRPC-Web's (`application/grpc-web…`), which
    /// ``isGRPC(contentType:)`` also accepts: a server with a web handler serves it there.
    static func isGRPCWeb(contentType: String) -> Bool {
        hasPrefix(contentType, "application/grpc-web")
    }

    /// Whether `text` begins with `prefix`, byte for byte: one `memcmp` for the native strings
    /// decoded headers are (a generic `starts(with:)` walks the UTF-8 views byte by byte, on
    /// every call's admission).
    static func hasPrefix(_ text: String, _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard text.utf8.count >= count else { return false }
        return text.utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, prefix.utf8Start, count) == 0 }
            ?? text.utf8.starts(with: UnsafeBufferPointer(start: prefix.utf8Start, count: count))
    }

    /// The message codec a gRPC content type names.
    enum Codec {
        /// JSON: `application/grpc+json`, or bare `application/grpc` (API.md §1).
        case json
        /// `application/grpc+proto`: only methods that speak protobuf take it (health).
        case protobuf
        /// Any other suffix.
        case other
    }

    /// The codec of a content type that ``isGRPC(contentType:)`` accepted; parameters after
    /// `;` are ignored, and the usual values are matched without splitting anything.
    static func codec(ofGRPC contentType: String) -> Codec {
        if contentType == "application/grpc+json" || contentType == "application/grpc" { return .json }
        let type = contentType.utf8.split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false)[0]
        let suffix = type.dropFirst("application/grpc".utf8.count).filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        if suffix.isEmpty || suffix.elementsEqual("+json".utf8) { return .json }
        if suffix.elementsEqual("+proto".utf8) { return .protobuf }
        return .other
    }

    /// Whether `bytes` spell `text` (a native string, as every decoded header is).
    static func matches(_ bytes: UnsafeRawBufferPointer, _ text: String) -> Bool {
        text.utf8.count == bytes.count
            && text.utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 } == true
    }

    private static func equals(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        text.withUTF8Buffer { expected in
            expected.count == bytes.count && memcmp(expected.baseAddress!, bytes.baseAddress!, bytes.count) == 0
        }
    }
}
