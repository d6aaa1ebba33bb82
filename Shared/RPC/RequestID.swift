internal import Synchronization

/// Request ids for calls that arrive without `x-request-id`.
public enum RequestID {
    /// A random prefix per process, so ids from different processes do not collide.
    private static let processPrefix = UInt32.random(in: .min ... .max)
    private static let counter = Atomic<UInt32>(0)

    /// A new id: 16 lower-case hex digits — 8 for the process, 8 counting its calls. Cheap
    /// enough for every call (no system randomness per call).
    public static func make() -> String {
        let sequence = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return hex(processPrefix) + hex(sequence)
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
