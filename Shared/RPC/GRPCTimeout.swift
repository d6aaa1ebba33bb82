/// The `grpc-timeout` header: a positive integer of at most 8 digits and a unit
/// (`H`, `M`, `S`, `m`, `u`, `n`).
/// https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md#requests
public enum GRPCTimeout {
    private static let units: [(Character, Int64)] = [
        ("n", 1), ("u", 1_000), ("m", 1_000_000), ("S", 1_000_000_000), ("M", 60_000_000_000),
        ("H", 3_600_000_000_000),
    ]

    /// Parses a header value into a duration; `nil` when it is malformed.
    public static func parse(_ text: String) -> Duration? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8.count <= 9, let unitByte = utf8.last else { return nil }
        let digits = utf8.dropLast()
        guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        var value: Int64 = 0
        for digit in digits { value = value * 10 + Int64(digit - 0x30) }
        guard let scale = units.first(where: { $0.0 == Character(UnicodeScalar(unitByte)) })?.1 else { return nil }
        let (nanos, overflow) = value.multipliedReportingOverflow(by: scale)
        return .nanoseconds(overflow ? Int64.max : nanos)
    }

    /// Encodes a duration with at most 7 digits, in the finest unit that fits, rounding up
    /// so that the peer never gives up before we do. Non-positive durations encode as `1n`.
    public static func encode(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, seconds > 0 || attoseconds > 0 else { return "1n" }
        // Round a sub-nanosecond remainder up, and saturate rather than wrap.
        let fraction = attoseconds / 1_000_000_000 + (attoseconds % 1_000_000_000 == 0 ? 0 : 1)
        let (secondNanos, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, sumOverflow) = secondNanos.addingReportingOverflow(fraction)
        let nanos = overflow || sumOverflow ? Int64.max : sum
        for (unit, scale) in units {
            let value = nanos / scale + (nanos % scale == 0 ? 0 : 1)
            if value <= 9_999_999 { return "\(value)\(unit)" }
        }
        return "9999999H"
    }
}
