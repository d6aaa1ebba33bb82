/// The output of one encode: JSON bytes appended in encode order, with the bookkeeping that
/// sorts each object's keys when it closes and splices in containers created out of line
/// (see `JSONByteWriter+Containers.swift`).
///
/// Not thread-safe: it belongs to one encode call (and, for a nested container or super
/// encoder, to the writer it will be spliced into).
final class JSONByteWriter {
    /// An array or object that is still open.
    struct Frame {
        /// Whether this is an object (else an array).
        var isObject: Bool
        /// The offset of its opening bracket.
        var start: Int
        /// How many members or elements were begun.
        var count = 0
        /// Where its members start in ``JSONByteWriter/members``.
        var firstMember: Int
        /// Where its out-of-line children start in ``JSONByteWriter/children``.
        var firstChild: Int
        /// Tells frames apart that reuse a depth.
        var serial: Int
        /// Whether closing must rewrite the members: keys out of order or repeated, or children.
        var needsRebuild = false
    }

    /// What a container holds to write into its frame.
    struct FrameHandle {
        /// The frame's depth in ``JSONByteWriter/frames``.
        let index: Int
        /// The frame's serial number.
        let serial: Int
    }

    /// One member begun in an open object.
    struct Member {
        /// The offset of the key's opening quote.
        var keyStart: Int
        /// The offset just after the key's closing quote.
        var keyEnd: Int
        /// Whether the key was written without escapes, so its bytes are its UTF-8.
        var isUnescaped: Bool
        /// The first eight bytes of the key, big-endian and zero-padded, so most comparisons of
        /// unescaped keys are one integer comparison (an unescaped key has no zero byte).
        var prefix: UInt64
    }

    /// A nested container or super encoder with its own writer, spliced in when its parent
    /// frame closes.
    struct Child {
        /// For an object, the member's index within the frame; for an array, the byte offset.
        var position: Int
        /// The child's output.
        var writer: JSONByteWriter
    }

    /// The JSON written so far.
    @exclusivity(unchecked) var bytes = JSONByteBuffer()  // one call's; Benchmarks/profile-get-product catalog (HISTORY "JSON exclusivity")
    /// The open arrays and objects, outermost first.
    @exclusivity(unchecked) var frames: [Frame] = []  // one call's; Benchmarks/profile-get-product catalog (HISTORY "JSON exclusivity")
    /// The members of the open objects.
    @exclusivity(unchecked) var members: [Member] = []  // one call's; Benchmarks/profile-get-product catalog (HISTORY "JSON exclusivity")
    /// The out-of-line children of the open frames.
    @exclusivity(unchecked) var children: [Child] = []  // one call's; Benchmarks/profile-get-product catalog (HISTORY "JSON exclusivity")
    /// The coding path below ``basePath``: a key's offset in ``bytes``, or `-1 - index` for an
    /// array element. Offsets stay valid while on the path: only closed frames are rewritten.
    @exclusivity(unchecked) var path: [Int] = []  // one call's; Benchmarks/profile-get-product catalog (HISTORY "JSON exclusivity")
    /// The coding path of the value this writer holds, for out-of-line writers.
    let basePath: [any CodingKey]
    /// The next frame serial number.
    @exclusivity(unchecked) var nextSerial = 0  // one call's; Benchmarks/profile-get-product catalog (HISTORY "JSON exclusivity")
    /// Reusable space for rewriting an object's members.
    @exclusivity(unchecked) var scratch = JSONByteBuffer()  // one call's; Benchmarks/profile-get-product catalog (HISTORY "JSON exclusivity")

    /// Creates an empty writer for a value at `basePath`.
    init(basePath: [any CodingKey] = []) {
        self.basePath = basePath
    }

    /// Appends ASCII text.
    func appendASCII(_ text: StaticString) { bytes.append(text) }

    /// Appends `null`.
    func writeNull() { appendASCII("null") }

    /// Appends `true` or `false`.
    func writeBool(_ value: Bool) { value ? appendASCII("true") : appendASCII("false") }

    /// Appends a quoted, escaped string.
    func writeString(_ value: String) { JSONEscaping.appendQuoted(value, to: &bytes) }

    /// Appends a signed integer in decimal.
    func writeInteger(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        writeInteger(value.magnitude)
    }

    /// Appends an unsigned integer in decimal.
    func writeInteger(_ value: UInt64) {
        var digits = 1
        var power: UInt64 = 10
        // UInt64.max has 20 digits; 10^20 would overflow.
        while digits < 20, value >= power {
            digits += 1
            power &*= 10
        }
        let output = bytes.reserve(digits)
        var rest = value
        for offset in stride(from: digits - 1, through: 0, by: -1) {
            output[offset] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        bytes.commit(digits)
    }

    /// Appends a finite `Double` as Foundation's `JSONEncoder` writes it: the shortest text
    /// that reads back as the same value, without a trailing `.0`.
    func writeDouble(_ value: Double) {
        // Whole numbers below 10^15 print as integers in Swift's shortest representation too.
        if value.rounded(.towardZero) == value, value.magnitude < 1e15, value != 0 || value.sign == .plus {
            writeInteger(Int64(value))
        } else {
            appendFloatingPoint(value.description)
        }
    }

    /// Appends a finite `Float` as Foundation's `JSONEncoder` writes it.
    func writeFloat(_ value: Float) { appendFloatingPoint(value.description) }

    private func appendFloatingPoint(_ description: String) {
        var text = description
        if text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { bytes.append($0) }
    }

    /// The coding path of the value being written, built only when asked for.
    var codingPath: [any CodingKey] {
        var result = basePath
        for entry in path {
            result.append(entry < 0 ? JSONPathKey(index: -1 - entry) : JSONPathKey(key(at: entry)))
        }
        return result
    }

    /// The key whose opening quote is at `offset`.
    func key(at offset: Int) -> String {
        let buffer = bytes.contents
        let start = Swift.min(offset + 1, buffer.count)
        var end = start
        while end < buffer.count, buffer[end] != UInt8(ascii: "\"") {
            end += buffer[end] == UInt8(ascii: "\\") ? 2 : 1
        }
        return JSONEscaping.unescape(UnsafeBufferPointer(rebasing: buffer[start..<Swift.min(end, buffer.count)]))
    }

    /// The error for a number JSON cannot represent (NaN or an infinity).
    func nonFiniteError(_ value: Any, key: (any CodingKey)? = nil) -> EncodingError {
        var path = codingPath
        if let key { path.append(key) }
        return EncodingError.invalidValue(
            value, EncodingError.Context(codingPath: path, debugDescription: "Unable to encode \(value) directly in JSON."))
    }

    /// The error for a container used after its value was finished.
    func misuseError(_ value: Any) -> EncodingError {
        EncodingError.invalidValue(
            value,
            EncodingError.Context(
                codingPath: codingPath, debugDescription: "A container was used after its value finished encoding."))
    }
}
