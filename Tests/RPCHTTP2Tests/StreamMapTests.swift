@testable import RPCHTTP2
import Testing

@Suite("Stream map")
struct StreamMapTests {
    final class Box {
        let id: Int32
        init(_ id: Int32) { self.id = id }
    }

    @Test("streams are found by id until removed, and ids never added are not found")
    func insertFindRemove() {
        var map = StreamMap<Box>()
        #expect(map.isEmpty)
        for id in stride(from: Int32(1), through: 31, by: 2) { map.insert(Box(id), for: id) }
        #expect(map.count == 16)
        #expect(map[7]?.id == 7)
        #expect(map[8] == nil)
        #expect(map[0] == nil)
        #expect(map[-3] == nil)
        #expect(map.removeValue(forKey: 7)?.id == 7)
        #expect(map[7] == nil)
        #expect(map.removeValue(forKey: 7) == nil)  // once only
        #expect(map.count == 15)
        #expect(Set(map.allValues.map(\.id)) == Set(stride(from: Int32(1), through: 31, by: 2)).subtracting([7]))
        map.removeAll()
        #expect(map.isEmpty && map[1] == nil && map.allValues.isEmpty)
    }

    @Test("unretained finds the stream the table holds, remembers the last one, and forgets it once removed")
    func unretainedLookups() {
        var map = StreamMap<Box>()
        weak var gone: Box?
        do {
            let first = Box(1)
            gone = first
            map.insert(first, for: 1)
        }
        map.insert(Box(3), for: 3)
        #expect(map.unretained(1)?.takeUnretainedValue().id == 1)
        #expect(map.unretained(1)?.takeUnretainedValue().id == 1)  // remembered
        #expect(map.unretained(3)?.takeUnretainedValue().id == 3)
        #expect(map.unretained(5) == nil)
        #expect(map.unretained(1)?.takeUnretainedValue().id == 1)
        // Removed while remembered: the table's reference was the only one, and a lookup must
        // not hand out the freed stream.
        map.removeValue(forKey: 1)
        #expect(gone == nil)
        #expect(map.unretained(1) == nil)
        // Replaced: the new stream, not the one it replaced.
        let replacement = Box(3)
        #expect(map.unretained(3)?.takeUnretainedValue().id == 3)
        map.insert(replacement, for: 3)
        #expect(map.unretained(3)?.takeUnretainedValue() === replacement)
        map.removeAll()
        #expect(map.unretained(3) == nil)
    }

    @Test("inserting an id again replaces its stream")
    func replace() {
        var map = StreamMap<Box>()
        let first = Box(5), second = Box(5)
        map.insert(first, for: 5)
        map.insert(second, for: 5)
        #expect(map.count == 1)
        #expect(map[5] === second)
    }

    @Test("ids that share a home slot are all found, and removing one leaves the others reachable")
    func collisions() {
        var map = StreamMap<Box>(capacity: 4)  // 16 slots: ids 2k+1 and 2k+33 share a home
        let ids: [Int32] = [1, 33, 65, 97, 3, 35, 31, 63]  // 31 and 63 wrap around to slot 0
        for id in ids { map.insert(Box(id), for: id) }
        for id in ids { #expect(map[id]?.id == id) }
        var remaining = Set(ids)
        for removed in [33, 1, 63] as [Int32] {
            #expect(map.removeValue(forKey: removed)?.id == removed)
            remaining.remove(removed)
            for id in remaining { #expect(map[id]?.id == id) }
            #expect(map[removed] == nil)
        }
        #expect(map.count == ids.count - 3)
    }

    @Test("a long run of opening and closing streams agrees with a dictionary at every step")
    func matchesDictionary() {
        var map = StreamMap<Box>()
        var reference: [Int32: Box] = [:]
        var generator = SystemRandomNumberGenerator()
        var nextID: Int32 = 1
        for step in 0..<20_000 {
            // Mostly open new streams while few are open, mostly close while many are.
            let open = reference.isEmpty || Int.random(in: 0..<300, using: &generator) >= reference.count
            if open {
                let box = Box(nextID)
                map.insert(box, for: nextID)
                reference[nextID] = box
                nextID += 2
            } else {
                let id = reference.keys.randomElement(using: &generator)!
                #expect(map.removeValue(forKey: id) === reference.removeValue(forKey: id))
            }
            #expect(map.count == reference.count)
            if step % 97 == 0 {
                for (id, box) in reference { #expect(map[id] === box) }
                #expect(map[nextID] == nil)
                #expect(map[nextID - 1] == nil)
            }
        }
        #expect(Set(map.allValues.map(\.id)) == Set(reference.keys))
    }
}
