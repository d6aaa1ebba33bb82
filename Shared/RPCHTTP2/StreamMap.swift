/// The open streams of one connection by stream id, without hashing: open addressing with
/// linear probing in a power-of-two table, indexed by `id >> 1`. One side's stream ids rise by
/// two (RFC 9113 §5.1.1), so the streams open at once sit in consecutive slots and a lookup
/// rarely probes twice — where a `Dictionary` would run SipHash on every lookup, insert and
/// removal. Removal shifts the entries after it back (no tombstones), so lookups stay short
/// however many streams have come and gone. Loop only, like the connection that owns it.
struct StreamMap<Value: AnyObject> {
    /// A stream and its id; id 0 marks an empty slot (stream 0 is the connection, never a
    /// stream). One array of pairs rather than two arrays: a lookup retains one buffer.
    private struct Slot {
        var id: Int32
        var value: Value?
    }

    private var slots: [Slot]
    private var mask: Int
    /// How many streams are in the map.
    private(set) var count = 0
    /// The stream ``unretained(_:)`` found or ``insert(_:for:)`` added last, and its id (0 for
    /// none): nghttp2 reports a stream's headers, data and end one callback after another, so
    /// most lookups need no probe. Unretained: the table holds it until it is removed, which
    /// forgets it here too.
    private var recent: Unmanaged<Value>?
    private var recentID: Int32 = 0

    /// An empty map with room for `capacity` streams before it grows.
    init(capacity: Int = 16) {
        var size = 16
        while size * 3 < capacity * 4 { size *= 2 }
        slots = Array(repeating: Slot(id: 0, value: nil), count: size)
        mask = size - 1
    }

    /// Whether no stream is in the map.
    var isEmpty: Bool { count == 0 }

    /// The stream with id `id`, if it is in the map.
    subscript(id: Int32) -> Value? {
        var slot = home(of: id)
        while true {
            let found = slots[slot].id
            if found == id { return slots[slot].value }
            if found == 0 { return nil }
            slot = (slot + 1) & mask
        }
    }

    /// The stream with id `id`, unretained, if it is in the map: valid until it is removed.
    /// Reaching it through `_withUnsafeGuaranteedRef` costs no retain and release (per header
    /// field, per data chunk) — only for work that cannot remove it from the map. Kept for
    /// `Benchmarks/gateway-ab` (Benchmarks/HISTORY.md, 2026-11-27, 89557bf): with the retains
    /// (and those of the nghttp2 callbacks) the gateway forwarded fewer calls.
    mutating func unretained(_ id: Int32) -> Unmanaged<Value>? {
        if id == recentID, let recent { return recent }
        guard let found = self[id] else { return nil }
        recent = .passUnretained(found)
        recentID = id
        return recent
    }

    /// Adds the stream with id `id` (a positive stream id), or replaces the one it had.
    mutating func insert(_ value: Value, for id: Int32) {
        precondition(id > 0, "stream ids are positive")
        if (count + 1) * 4 > slots.count * 3 { grow() }  // keep the table at most 3/4 full
        var slot = home(of: id)
        while true {
            let found = slots[slot].id
            if found == id || found == 0 {
                if found == 0 { count += 1 }
                // Remembered before the store releases any stream this one replaces.
                recent = .passUnretained(value)
                recentID = id
                slots[slot] = Slot(id: id, value: value)
                return
            }
            slot = (slot + 1) & mask
        }
    }

    /// Removes the stream with id `id`; returns it, or nil when it was not in the map.
    @discardableResult
    mutating func removeValue(forKey id: Int32) -> Value? {
        var hole = home(of: id)
        while slots[hole].id != id {
            if slots[hole].id == 0 { return nil }
            hole = (hole + 1) & mask
        }
        let removed = slots[hole].value
        if id == recentID { forgetRecent() }
        // Backward shift: an entry after the hole moves into it unless its home slot lies
        // after the hole (cyclically), where a lookup would no longer pass the hole to find it.
        var next = (hole + 1) & mask
        while slots[next].id != 0 {
            if (next - home(of: slots[next].id)) & mask >= (next - hole) & mask {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = Slot(id: 0, value: nil)
        count -= 1
        return removed
    }

    /// Every stream in the map, in no particular order.
    var allValues: [Value] { slots.compactMap(\.value) }

    /// Empties the map, keeping its table.
    mutating func removeAll() {
        forgetRecent()  // before the streams are released
        for slot in slots.indices where slots[slot].id != 0 {
            slots[slot] = Slot(id: 0, value: nil)
        }
        count = 0
    }

    private mutating func forgetRecent() {
        recent = nil
        recentID = 0
    }

    private func home(of id: Int32) -> Int {
        Int(UInt32(bitPattern: id) >> 1) & mask
    }

    private mutating func grow() {
        let entries = slots.filter { $0.id != 0 }
        let size = slots.count * 2
        slots = Array(repeating: Slot(id: 0, value: nil), count: size)
        mask = size - 1
        count = 0
        for entry in entries {
            if let value = entry.value { insert(value, for: entry.id) }
        }
    }
}
