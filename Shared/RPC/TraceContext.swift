internal import Synchronization

/// The W3C trace context of one span of a call (https://www.w3.org/TR/trace-context/): the
/// trace it belongs to, its own id, its parent's, and the caller's sampling flags and vendor
/// state — what `traceparent` and `tracestate` carry from hop to hop.
///
/// A server continues the trace of a valid `traceparent` (its span's parent is the caller's
/// span) or starts one (``serverSpan(traceparent:tracestate:)``); each call it makes upstream
/// is a child span whose id is the `traceparent` the next hop receives (``child()``), so the
/// spans of one shopper's checkout form one tree across every process, and each call line
/// names its trace and span (`trace-id=… span-id=…`).
public struct TraceContext: Sendable, Hashable {
    /// The trace's id, 16 bytes as two halves (high first); never all zero.
    public let traceID: (high: UInt64, low: UInt64)
    /// This span's id; never zero.
    public let spanID: UInt64
    /// The parent span's id; nil at the root of a trace.
    public let parentSpanID: UInt64?
    /// The trace flags (bit 0: the caller sampled it), passed on as received.
    public let flags: UInt8
    /// The caller's `tracestate`, passed on unchanged when it is well within bounds; nil otherwise.
    public let traceState: String?

    /// A span with these ids.
    public init(traceID: (high: UInt64, low: UInt64), spanID: UInt64, parentSpanID: UInt64?, flags: UInt8 = 1, traceState: String? = nil) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.flags = flags
        self.traceState = traceState
    }

    /// Whether two spans are the same: every id, the flags and the state.
    public static func == (lhs: TraceContext, rhs: TraceContext) -> Bool {
        lhs.traceID == rhs.traceID && lhs.spanID == rhs.spanID && lhs.parentSpanID == rhs.parentSpanID && lhs.flags == rhs.flags
            && lhs.traceState == rhs.traceState
    }

    /// Hashes the ids, which tell spans apart.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(traceID.high)
        hasher.combine(traceID.low)
        hasher.combine(spanID)
    }

    // MARK: Spans

    /// The span of a call served here: a child of the caller's span when `traceparent` is
    /// valid (its trace, flags and — if at most ``maxTraceStateBytes`` — `tracestate` kept),
    /// else the root of a new trace (a malformed header is ignored, as the specification asks).
    public static func serverSpan(traceparent: String?, tracestate: String?) -> TraceContext {
        guard let traceparent, let parent = parse(traceparent: traceparent) else {
            return TraceContext(traceID: newTraceID(), spanID: newSpanID(), parentSpanID: nil)
        }
        let state = tracestate.flatMap { $0.utf8.count <= maxTraceStateBytes ? $0 : nil }
        return TraceContext(traceID: parent.traceID, spanID: newSpanID(), parentSpanID: parent.spanID, flags: parent.flags, traceState: state)
    }

    /// The span of a call served here, from its metadata's `traceparent` and `tracestate`: a
    /// `traceparent` sent twice is invalid; several `tracestate` fields are one list, joined.
    public static func serverSpan(metadata: Metadata) -> TraceContext {
        // One pass, no list built: most calls carry neither field, or one of each.
        var parent: String?
        var parents = 0
        var state: String?
        for entry in metadata {
            if entry.name == MetadataKey.traceparent {
                parent = entry.value
                parents += 1
            } else if entry.name == MetadataKey.tracestate {
                state = state.map { $0 + "," + entry.value } ?? entry.value
            }
        }
        return serverSpan(traceparent: parents == 1 ? parent : nil, tracestate: state)
    }

    /// A new span under this one (a call made while serving this span's call).
    public func child() -> TraceContext {
        TraceContext(traceID: traceID, spanID: Self.newSpanID(), parentSpanID: spanID, flags: flags, traceState: traceState)
    }

    /// Sets `traceparent` naming this span, and `tracestate` when there is one (else removes
    /// any): the metadata of a call this span makes.
    public func write(into metadata: inout Metadata) {
        metadata.set(MetadataKey.traceparent, traceparent)
        metadata.set(MetadataKey.tracestate, traceState)
    }

    /// The most bytes of `tracestate` passed on (the specification's 512 characters).
    public static let maxTraceStateBytes = 512

    // MARK: Text

    /// `traceparent` naming this span: `00-<trace id>-<span id>-<flags>`.
    public var traceparent: String {
        // Unsafe buffer, written in place at the fixed positions below (within 55): one
        // allocation, where joining strings took four, for a field every forwarded call carries
        // (Benchmarks/profile-get-product gateway).
        String(unsafeUninitializedCapacity: 55) { text in
            text[0] = UInt8(ascii: "0")
            text[1] = UInt8(ascii: "0")
            text[2] = Self.dash
            text[35] = Self.dash
            text[52] = Self.dash
            HexDigits.write(traceID.high, count: 16, into: text, at: 3)
            HexDigits.write(traceID.low, count: 16, into: text, at: 19)
            HexDigits.write(spanID, count: 16, into: text, at: 36)
            HexDigits.write(UInt64(flags), count: 2, into: text, at: 53)
            return 55
        }
    }

    /// The trace id as 32 lower-case hexadecimal digits.
    public var traceIDText: String { Self.hex(traceID.high) + Self.hex(traceID.low) }

    /// This span's id as 16 lower-case hexadecimal digits.
    public var spanIDText: String { Self.hex(spanID) }

    /// The parent's id as 16 lower-case hexadecimal digits, nil at a root.
    public var parentSpanIDText: String? { parentSpanID.map { Self.hex($0) } }

    /// The span a `traceparent` names — its trace id, its span id (the parent of a span
    /// continuing it) and flags — or nil when it is not valid: version `00` exactly 55
    /// characters; a later version at least that, the rest after a `-`; version `ff`, upper
    /// case, or an all-zero id invalid.
    public static func parse(traceparent: String) -> TraceContext? {
        // Read in place from the string's UTF-8: every call a service serves behind the
        // gateway carries one (Benchmarks/profile-get-product catalog). Every index read is
        // below the count checked first; 55 only when the count is not 55.
        var traceparent = traceparent
        return traceparent.withUTF8 { text in
            guard text.count >= 55, text[2] == dash, text[35] == dash, text[52] == dash,
                let version = HexDigits.value(of: text, 0..<2), version != 0xFF,
                version == 0 ? text.count == 55 : (text.count == 55 || text[55] == dash),
                let high = HexDigits.value(of: text, 3..<19), let low = HexDigits.value(of: text, 19..<35), high != 0 || low != 0,
                let span = HexDigits.value(of: text, 36..<52), span != 0,
                let flags = HexDigits.value(of: text, 53..<55)
            else { return nil }
            return TraceContext(traceID: (high, low), spanID: span, parentSpanID: nil, flags: UInt8(flags))
        }
    }

    /// The byte between a `traceparent`'s fields.
    private static let dash = UInt8(ascii: "-")

    /// `value` as lower-case hexadecimal, two digits per byte of its type.
    private static func hex<Value: FixedWidthInteger & UnsignedInteger>(_ value: Value) -> String {
        HexDigits.string(UInt64(value), count: Value.bitWidth / 4)
    }

    // MARK: Ids

    /// A new trace id: random, never zero.
    static func newTraceID() -> (high: UInt64, low: UInt64) {
        (IDSource.shared.next(), IDSource.shared.next())
    }

    /// A new span id: random, never zero.
    static func newSpanID() -> UInt64 { IDSource.shared.next() }
}

/// Trace and span ids: a counter from a random start, each value scrambled by SplitMix64 (a
/// bijection, so no two values of one process repeat before 2^64 ids). One atomic add per id
/// instead of a read of the system's random source for every span of every call; ids need
/// to be unique, not unpredictable.
final class IDSource: Sendable {
    /// The process's source.
    static let shared = IDSource()

    /// The last value handed out, before scrambling.
    private let counter: PortableAtomic<UInt64>

    /// A source starting from a random value.
    private init() {
        var generator = SystemRandomNumberGenerator()
        counter = PortableAtomic(generator.next())
    }

    /// The next id, never zero.
    func next() -> UInt64 {
        while true {
            var value = counter.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            value ^= value >> 31
            if value != 0 { return value }
        }
    }
}
