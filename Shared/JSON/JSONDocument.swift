/// One scanned JSON message — its bytes and ``JSONToken``s — and the lookups the decoding
/// containers share: members by key, subtree ends, coding paths.
///
/// Reads the message's bytes in place while the decode runs; if a decoder outlives the decode
/// (``detach()``), the bytes are copied first, so it stays memory-safe. Not thread-safe: it
/// belongs to one decode call.
final class JSONDocument {
    /// Objects with more members than this get a hash table for key lookups, so decoding a
    /// large dictionary stays linear.
    static let memberTableThreshold = 12

    /// The message, as UTF-8: borrowed from the caller until ``detach()``, owned after.
    @exclusivity(unchecked) private(set) var bytes: UnsafeBufferPointer<UInt8>  // one call's; Benchmarks/profile-get-product catalog (HISTORY "JSON exclusivity")
    /// Whether ``bytes`` is our own copy, to free.
    private var ownsBytes = false
    /// The values of the message in document order; the top-level value is token 0.
    let tokens: [JSONToken]
    /// Null values standing in for absent members that `superDecoder(forKey:)` was asked for,
    /// numbered after `tokens`, with their coding paths.
    private var absentValues: [[any CodingKey]] = []
    /// Key-to-value-token tables of large objects, built on first use.
    @exclusivity(unchecked) private var memberTables: [Int: [String: Int]] = [:]  // one call's; Benchmarks/profile-get-product catalog (HISTORY "JSON exclusivity")

    /// Scans `bytes`, which must hold exactly one JSON value and stay valid until
    /// ``detach()`` or the end of this document.
    init(bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) {
        self.bytes = bytes
        self.tokens = try JSONScanner.scan(bytes)
    }

    deinit {
        if ownsBytes { bytes.deallocate() }
    }

    /// Copies the borrowed bytes, for when this document outlives them.
    func detach() {
        guard !ownsBytes else { return }
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = copy.initialize(from: bytes)
        bytes = UnsafeBufferPointer(copy)
        ownsBytes = true
    }

    /// The token at `index`, including the null tokens of absent members.
    func token(_ index: Int) -> JSONToken {
        if index < tokens.count { return tokens[index] }
        return JSONToken(kind: .null, flags: 0, start: 0, extent: 0, count: 0, parent: JSONToken.noParent, position: 0)
    }

    /// The index of a null token standing for an absent value at `path`.
    func absentValue(at path: [any CodingKey]) -> Int {
        absentValues.append(path)
        return tokens.count + absentValues.count - 1
    }

    /// The index of the first token after the value at `index` and everything inside it.
    func subtreeEnd(_ index: Int) -> Int {
        let token = tokens[index]
        return token.kind == .array || token.kind == .object ? Int(token.extent) : index + 1
    }

    /// The string at `index`, which must be a string token.
    func string(at index: Int) -> String {
        let token = tokens[index]
        let raw = UnsafeBufferPointer(rebasing: bytes[token.byteRange])
        if token.flags & JSONToken.escapedFlag == 0 { return String(decoding: raw, as: UTF8.self) }
        return JSONEscaping.unescape(raw)
    }

    /// The value token of the last member named `name` in the object at `object`, or nil.
    ///
    /// Small objects are searched by comparing raw key bytes, so no key String is created;
    /// keys with escapes or non-ASCII bytes are compared as Strings, which also makes
    /// canonically equivalent spellings match as they do in Foundation.
    func member(named name: String, in object: Int) -> Int? {
        let container = tokens[object]
        if container.count > Self.memberTableThreshold { return memberTable(of: object)[name] }
        var utf8Name = name
        return utf8Name.withUTF8 { wanted in
            var found: Int?
            var key = object + 1
            let end = Int(container.extent)
            while key < end {
                let keyToken = tokens[key]
                if keyToken.needsSlowString {
                    if string(at: key) == name { found = key + 1 }
                } else if Int(keyToken.extent) == wanted.count, equalBytes(at: Int(keyToken.start), wanted) {
                    found = key + 1
                }
                key = subtreeEnd(key + 1)
            }
            return found
        }
    }

    private func equalBytes(at offset: Int, _ other: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in other.indices where bytes[offset + index] != other[index] { return false }
        return true
    }

    /// The distinct member names of the object at `object`, in order of first appearance.
    func memberNames(in object: Int) -> [String] {
        var names: [String] = []
        var seen = Set<String>()
        var key = object + 1
        let end = Int(tokens[object].extent)
        while key < end {
            let name = string(at: key)
            if seen.insert(name).inserted { names.append(name) }
            key = subtreeEnd(key + 1)
        }
        return names
    }

    private func memberTable(of object: Int) -> [String: Int] {
        if let table = memberTables[object] { return table }
        var table: [String: Int] = [:]
        table.reserveCapacity(Int(tokens[object].count))
        var key = object + 1
        let end = Int(tokens[object].extent)
        while key < end {
            table[string(at: key)] = key + 1
            key = subtreeEnd(key + 1)
        }
        memberTables[object] = table
        return table
    }

    /// The coding path of the value at `index`, built by walking up the parents; only errors
    /// and callers of `codingPath` pay for it.
    func codingPath(of index: Int) -> [any CodingKey] {
        if index >= tokens.count { return absentValues[index - tokens.count] }
        var path: [any CodingKey] = []
        var current = index
        while tokens[current].parent != JSONToken.noParent {
            let parent = Int(tokens[current].parent)
            if tokens[parent].kind == .array {
                path.append(JSONPathKey(index: Int(tokens[current].position)))
            } else {
                path.append(JSONPathKey(string(at: current - 1)))
            }
            current = parent
        }
        return path.reversed()
    }
}

/// A coding key of a path the codec reports: an object member's name or an array index.
struct JSONPathKey: CodingKey, Sendable {
    /// The key `super`, which `superDecoder()` and `superEncoder()` use.
    static let superKey = JSONPathKey("super")

    /// The member name, or `Index n` for an array element.
    let stringValue: String
    /// The array index, or nil for a member.
    let intValue: Int?

    /// A member name.
    init(_ name: String) {
        stringValue = name
        intValue = nil
    }

    /// An array index.
    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    /// A member name.
    init(stringValue: String) { self.init(stringValue) }

    /// An array index.
    init(intValue: Int) { self.init(index: intValue) }
}
