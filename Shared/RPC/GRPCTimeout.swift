/// The `grpc-timeout` header: a positive integer of at most 8 digits and a unit
/// (`H`, `M`, `S`, `m`, `u`, `n`).
/// https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md#requests
public enum GRPCTimeout {
    private static let units: [(unit: UInt8, scale: Int64)] = [
        (UInt8(ascii: "n"), 1), (UInt8(ascii: "u"), 1_000), (UInt8(ascii: "m"), 1_000_000),
        (UInt8(ascii: "S"), 1_000_000_000), (UInt8(ascii: "M"), 60_000_000_000), (UInt8(ascii: "H"), 3_600_000_000_000),
    ]

    /// Parses a header value into a duration; `nil` when it is malformed.
    public static func parse(_ text: String) -> Duration? {
        let utf8 = text.utf8
        guard utf8.count >= 2, utf8.count <= 9, let unitByte = utf8.last else { return nil }
        var value: Int64 = 0
        for digit in utf8.dropLast() {
            guard digit >= 0x30 && digit <= 0x39 else { return nil }
            value = value * 10 + Int64(digit - 0x30)
        }
        guard let scale = units.first(where: { $0.unit == unitByte })?.scale else { return nil }
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
            if value <= 9_999_999 { return text(value, unit) }
        }
        return "9999999H"
    }

    /// `value` in decimal followed by `unit`: at most 8 bytes, so a string without allocation.
    private static func text(_ value: Int64, _ unit: UInt8) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8) { buffer in
            var digits = 0
            var rest = value
            repeat {
                digits += 1
                rest /= 10
            } while rest > 0
            rest = value
            for index in stride(from: digits - 1, through: 0, by: -1) {
                buffer[index] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                rest /= 10
            }
            buffer[digits] = unit
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[...digits]), as: UTF8.self)
        }
    }
}
