internal import Synchronization

/// A call's request id: the caller's `x-request-id`, or one made up here. A made-up id is
/// kept as a number and only turned into text when something reads it (a log line, the next
/// hop), since most calls never do.
public struct RequestID: Sendable, Hashable, CustomStringConvertible {
    private enum Storage: Sendable, Hashable {
        case given(String)
        case generated(UInt32)
    }

    private let storage: Storage

    /// The id a caller sent.
    public init(_ text: String) { storage = .given(text) }

    private init(sequence: UInt32) { storage = .generated(sequence) }

    /// A random prefix per process (28 bits), so ids from different processes do not collide.
    private static let processPrefix = UInt32.random(in: 0...0x0FFF_FFFF)
    private static let counter = Atomic<UInt32>(0)

    /// A new id for a call that arrived without one.
    public static func next() -> RequestID {
        RequestID(sequence: counter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// A new id as text: 15 lower-case hex digits — 7 for the process, 8 counting its calls.
    /// Fifteen bytes is the most a Swift string holds without an allocation, and the id is
    /// formatted, sent, parsed and logged on every hop of every call.
    public static func make() -> String { next().description }

    public var description: String {
        switch storage {
        case .given(let text): text
        case .generated(let sequence): Self.hex((UInt64(Self.processPrefix) << 32) | UInt64(sequence))
        }
    }

    /// The low 60 bits of `value` as 15 lower-case hex digits, written straight into the
    /// string's (inline) storage.
    private static func hex(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 15) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for index in 0..<15 {
                let nibble = Int((value >> UInt64(56 - 4 * index)) & 0xF)
                buffer[index] = digits.utf8Start[nibble]
            }
            return 15
        }
    }
}
