/// Request ids for calls that arrive without `x-request-id`.
public enum RequestID {
    /// A new random id: 16 lower-case hex digits (64 bits).
    public static func make() -> String {
        let value = UInt64.random(in: .min ... .max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
