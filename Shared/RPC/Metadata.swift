/// Request or response metadata: an ordered list of lower-case header names and values.
///
/// Names ending in `-bin` carry base64 text on the wire, as gRPC specifies; this type stores
/// the wire text and leaves decoding to whoever reads such a key.
public struct Metadata: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// One name and value.
    public struct Entry: Sendable, Equatable {
        /// The lower-case name.
        public var name: String
        /// The value as it appears on the wire.
        public var value: String
    }

    private var entries: [Entry]

    /// Empty metadata.
    public init() { entries = [] }

    public typealias Key = String
    public typealias Value = String

    public init(dictionaryLiteral elements: (String, String)...) {
        entries = elements.map { Entry(name: Self.lowercase($0.0), value: $0.1) }
    }

    /// Appends a value, keeping any earlier values of the same name.
    public mutating func add(_ name: String, _ value: String) {
        if entries.capacity == 0 { entries.reserveCapacity(4) }  // one allocation for the usual few
        entries.append(Entry(name: Self.lowercase(name), value: value))
    }

    /// Replaces every value of `name` with one value, or removes them all when `value` is nil.
    public mutating func set(_ name: String, _ value: String?) {
        let name = Self.lowercase(name)
        // Only a list that has the name is rewritten (a shared one would be copied to scan it).
        if entries.contains(where: { $0.name == name }) { entries.removeAll { $0.name == name } }
        if let value { entries.append(Entry(name: name, value: value)) }
    }

    /// The first value of `name`, if any.
    public subscript(name: String) -> String? {
        if entries.isEmpty { return nil }  // most calls carry no custom metadata
        let name = Self.lowercase(name)
        return entries.first { $0.name == name }?.value
    }

    /// Every value of `name`, in order.
    public func values(of name: String) -> [String] {
        let name = Self.lowercase(name)
        return entries.filter { $0.name == name }.map(\.value)
    }

    /// `name` in lower case; names are nearly always lower case already (HTTP/2 requires it on
    /// the wire), and checking the bytes costs less than building a new string.
    private static func lowercase(_ name: String) -> String {
        let needsLowering: (UInt8) -> Bool = { ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || $0 >= 0x80 }
        let lower = name.utf8.withContiguousStorageIfAvailable { !$0.contains(where: needsLowering) }
            ?? !name.utf8.contains(where: needsLowering)
        return lower ? name : name.lowercased()
    }

    /// The number of entries.
    public var count: Int { entries.count }

    public func makeIterator() -> IndexingIterator<[Entry]> { entries.makeIterator() }
}

/// Well-known metadata keys the system uses (API.md §1).
public enum MetadataKey {
        /// `authorization: Bearer <token>`.
        public static let authorization = "authorization"
        /// The admin or internal API key.
        public static let apiKey = "x-api-key"
        /// The request id, propagated on every hop.
        public static let requestID = "x-request-id"
        /// W3C trace context.
        public static let traceparent = "traceparent"
        /// W3C vendor trace state, passed on beside ``traceparent``.
        public static let tracestate = "tracestate"
        /// Required on PlaceOrder.
        public static let idempotencyKey = "idempotency-key"
        /// The client's address, named by the gateway for the services that count clients by
        /// address; trusted only beside the internal key.
        public static let forwardedFor = "x-forwarded-for"
}

extension Metadata {
    /// Whether `name` is custom metadata rather than part of the protocol (checked for every
    /// header of every call: a switch of short strings, no hashing).
    public static func isCustom(_ name: String) -> Bool {
        // gRPC reserves the `grpc-` prefix for the protocol.
        // Bytes, not `hasPrefix`, which compares grapheme clusters.
        if name.utf8.first == UInt8(ascii: ":") || name.utf8.starts(with: "grpc-".utf8) { return false }
        switch name {
        case "content-type", "te", "user-agent", "content-length", "host", "connection", "keep-alive",
            "proxy-connection", "transfer-encoding", "upgrade":
            return false
        default:
            return true
        }
    }
}
