internal import Synchronization

/// A call's request id: the caller's `x-request-id`, or one made up here. A made-up id is
/// kept as a number and only turned into text when something reads it (a log line, the next
/// hop), since most calls never do.
///
/// A caller's id is taken only when it is 1 to ``maxClientLength`` visible ASCII characters
/// (`!` to `~`): it goes into every log line of the call and every hop after it, so a client
/// must not choose its size (a 15 KB id made each call line 15 KB) or its bytes (spaces,
/// control characters, non-ASCII). Any other id is replaced by one made up here, and the
/// caller's is kept only as a bounded note (``clientNote``) for the call's log line.
public struct RequestID: Sendable, Hashable, CustomStringConvertible {
    /// What the id is: the caller's, or made up here.
    private enum Storage: Sendable, Hashable {
        /// The id a caller sent, acceptable as it is.
        case given(String)
        /// An id made up here, by its place in the process's count.
        case generated(UInt64)
        /// A made-up id standing in for a caller's that was refused, with the note of it.
        case replaced(UInt64, note: String)
    }

    /// The id.
    private let storage: Storage

    /// The most characters of a caller's id that are accepted.
    public static let maxClientLength = 64
    /// How many of a refused id's first bytes its note keeps.
    public static let noteLength = 32

    /// The id a caller sent, when it is acceptable (``isAcceptable(_:)``); else a new id, with
    /// the caller's noted (``clientNote``).
    public init(_ text: String) {
        if Self.isAcceptable(text) {
            storage = .given(text)
        } else {
            storage = .replaced(Self.counter.wrappingAdd(1, ordering: .relaxed).newValue, note: Self.note(text))
        }
    }

    /// Whether `text` is taken as a caller's id: 1 to ``maxClientLength`` bytes, each visible
    /// ASCII (0x21–0x7E).
    public static func isAcceptable(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            bytes.count >= 1 && bytes.count <= maxClientLength && bytes.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
        }
    }

    /// A refused id as its log line notes it: its first ``noteLength`` bytes, each one that is
    /// not visible ASCII (or is `"`, `\\`, `=`) as `?`, then `...` when bytes were left out, then
    /// its length — `abc?def...[15360B]`; at most 32 + 3 + 2 + 20 bytes whatever was sent.
    static func note(_ text: String) -> String {
        let bytes = text.utf8
        var note = String(decoding: bytes.prefix(noteLength).map { byte -> UInt8 in
            (byte >= 0x21 && byte <= 0x7E && byte != 0x22 && byte != 0x5C && byte != 0x3D) ? byte : UInt8(ascii: "?")
        }, as: UTF8.self)
        if bytes.count > noteLength { note += "..." }
        return note + "[\(bytes.count)B]"
    }

    /// What the caller sent as its id when it was refused and replaced (``init(_:)``), as a
    /// bounded note; nil when the id is the caller's own or was made up for a call without one.
    public var clientNote: String? {
        if case .replaced(_, let note) = storage { note } else { nil }
    }

    /// The id made up for the `sequence`-th call.
    private init(sequence: UInt64) { storage = .generated(sequence) }

    /// Random per process, so ids from different processes do not collide.
    private static let processSeed = UInt64.random(in: 0...UInt64.max)
    /// How many ids this process made up.
    private static let counter = PortableAtomic<UInt64>(0)

    /// A new id for a call that arrived without one.
    public static func next() -> RequestID {
        RequestID(sequence: counter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// The id made up for the `sequence`-th call of this process (``next()`` counts them).
    static func generated(sequence: UInt64) -> RequestID { RequestID(sequence: sequence) }

    /// A new id as text: 15 lower-case hex digits — 7 for the process (new every 2^32 calls),
    /// 8 counting its calls.
    /// Fifteen bytes is the most a Swift string holds without an allocation, and the id is
    /// formatted, sent, parsed and logged on every hop of every call.
    ///
    /// Eight digits count 2^32 calls, a day of a gateway at 50,000 a second: each further 2^32
    /// calls get a new random-looking prefix instead of repeating the ids of the first.
    public static func make() -> String { next().description }

    /// The id as text: the caller's as sent, or 15 hex digits.
    public var description: String {
        switch storage {
        case .given(let text): text
        case .generated(let sequence), .replaced(let sequence, _):
            Self.hex((Self.prefix(round: sequence >> 32) << 32) | (sequence & 0xFFFF_FFFF))
        }
    }

    /// The 28-bit prefix of the `round`-th 2^32 ids of this process: the process's seed mixed
    /// with the round (SplitMix64's finalizer), so every round looks as random as the first.
    private static func prefix(round: UInt64) -> UInt64 {
        var value = processSeed &+ round &* 0x9E37_79B9_7F4A_7C15
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return (value ^ (value >> 31)) & 0x0FFF_FFFF
    }

    /// The low 60 bits of `value` as 15 lower-case hex digits.
    private static func hex(_ value: UInt64) -> String { HexDigits.string(value, count: 15) }
}
