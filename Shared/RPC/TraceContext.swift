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

    public static func == (lhs: TraceContext, rhs: TraceContext) -> Bool {
        lhs.traceID == rhs.traceID && lhs.spanID == rhs.spanID && lhs.parentSpanID == rhs.parentSpanID && lhs.flags == rhs.flags
            && lhs.traceState == rhs.traceState
    }

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
        // Laid out in place on the stack, one allocation for the string: the gateway builds
        // one per forwarded call (Benchmarks/profile-get-product gateway).
        var text = InlineArray<55, UInt8>(repeating: Self.dash)
        text[0] = UInt8(ascii: "0")
        text[1] = UInt8(ascii: "0")
        Self.writeHex(traceID.high, into: &text, at: 3)
        Self.writeHex(traceID.low, into: &text, at: 19)
        Self.writeHex(spanID, into: &text, at: 36)
        Self.writeHex(flags, into: &text, at: 53)
        guard let utf8 = try? UTF8Span(validating: text.span) else {
            preconditionFailure("hexadecimal digits and dashes are valid UTF-8")
        }
        return String(copying: utf8)
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
        // Read in place (a span of the string's UTF-8): every call a service serves behind
        // the gateway carries one (Benchmarks/profile-get-product catalog).
        let text = traceparent.utf8.span
        guard text.count >= 55, text[2] == dash, text[35] == dash, text[52] == dash,
            let version = hexValue(text, 0..<2), version != 0xFF,
            version == 0 ? text.count == 55 : (text.count == 55 || text[55] == dash),
            let high = hexValue(text, 3..<19), let low = hexValue(text, 19..<35), high != 0 || low != 0,
            let span = hexValue(text, 36..<52), span != 0,
            let flags = hexValue(text, 53..<55)
        else { return nil }
        return TraceContext(traceID: (high, low), spanID: span, parentSpanID: nil, flags: UInt8(flags))
    }

    private static let dash = UInt8(ascii: "-")

    /// The value of the lower-case hexadecimal digits at `range` of `text` (at most 16); nil
    /// for any other byte. Looked up rather than compared: ids are random, so a branch per
    /// digit on letter-or-decimal is mispredicted about every third digit.
    private static func hexValue(_ text: Span<UInt8>, _ range: Range<Int>) -> UInt64? {
        var value: UInt64 = 0
        var invalid: UInt8 = 0
        for index in range {
            let nibble = nibbleOfDigit[Int(text[index])]
            invalid |= nibble
            value = value << 4 | UInt64(nibble & 0xF)
        }
        return invalid & 0xF0 == 0 ? value : nil
    }

    /// Each byte's value as a lower-case hexadecimal digit, 0xFF for bytes that are not one.
    private static let nibbleOfDigit: InlineArray<256, UInt8> = {
        var table = InlineArray<256, UInt8>(repeating: 0xFF)
        for nibble in 0..<16 { table[Int(digitOfNibble[nibble])] = UInt8(nibble) }
        return table
    }()

    /// The lower-case hexadecimal digit of each nibble.
    private static let digitOfNibble: InlineArray<16, UInt8> = [
        UInt8(ascii: "0"), UInt8(ascii: "1"), UInt8(ascii: "2"), UInt8(ascii: "3"), UInt8(ascii: "4"), UInt8(ascii: "5"),
        UInt8(ascii: "6"), UInt8(ascii: "7"), UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b"),
        UInt8(ascii: "c"), UInt8(ascii: "d"), UInt8(ascii: "e"), UInt8(ascii: "f"),
    ]

    /// `value` as lower-case hexadecimal, two digits per byte of its type.
    private static func hex<Value: FixedWidthInteger & UnsignedInteger>(_ value: Value) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Value.bitWidth / 4)
        appendHex(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `value` as lower-case hexadecimal, two digits per byte of its type.
    private static func appendHex<Value: FixedWidthInteger & UnsignedInteger>(_ value: Value, to bytes: inout [UInt8]) {
        var shift = Value.bitWidth - 4
        while shift >= 0 {
            bytes.append(hexDigit(UInt8(truncatingIfNeeded: value >> shift) & 0xF))
            shift -= 4
        }
    }

    /// Writes `value` as lower-case hexadecimal, two digits per byte of its type, into `text`
    /// from `start`.
    private static func writeHex<Value: FixedWidthInteger & UnsignedInteger, let count: Int>(
        _ value: Value, into text: inout InlineArray<count, UInt8>, at start: Int
    ) {
        let digits = Value.bitWidth / 4
        for offset in 0..<digits {
            text[start + offset] = hexDigit(UInt8(truncatingIfNeeded: value >> (4 * (digits - 1 - offset))) & 0xF)
        }
    }

    /// The lower-case hexadecimal digit of `nibble` (0–15), looked up (see ``hexValue(_:_:)``).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 { digitOfNibble[Int(nibble & 0xF)] }

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

    private let counter: PortableAtomic<UInt64>

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
