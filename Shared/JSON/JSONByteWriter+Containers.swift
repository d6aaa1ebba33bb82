/// Opening and closing arrays and objects.
///
/// Members are written in encode order. Closing an object rewrites its members in key order
/// (Foundation's `.sortedKeys`, which keeps our output byte-stable) when they were not already
/// sorted, keeps only the last of repeated keys, and splices in out-of-line children.
extension JSONByteWriter {
    /// The frame that the encoder of the value that started at `start`, `depth` frames deep,
    /// writes into: the one it opened before, or a new one.
    func container(isObject: Bool, depth: Int, start: Int) -> FrameHandle {
        if frames.count == depth + 1, frames[depth].start == start {
            precondition(frames[depth].isObject == isObject, "A value asked for both a keyed and an unkeyed container.")
            return FrameHandle(index: depth, serial: frames[depth].serial)
        }
        precondition(
            frames.count == depth && bytes.count == start, "A container was requested after the value was encoded.")
        return openFrame(isObject: isObject)
    }

    /// Writes an opening bracket and pushes its frame.
    func openFrame(isObject: Bool) -> FrameHandle {
        nextSerial += 1
        frames.append(
            Frame(
                isObject: isObject, start: bytes.count, firstMember: members.count, firstChild: children.count,
                serial: nextSerial))
        bytes.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
        return FrameHandle(index: frames.count - 1, serial: nextSerial)
    }

    /// Whether `handle`'s frame is open and innermost, so it may be written to.
    func isCurrent(_ handle: FrameHandle) -> Bool {
        handle.index == frames.count - 1 && frames[handle.index].serial == handle.serial
    }

    /// The number of members or elements begun in `handle`'s frame (0 once it is closed).
    func count(of handle: FrameHandle) -> Int {
        handle.index < frames.count && frames[handle.index].serial == handle.serial ? frames[handle.index].count : 0
    }

    /// Writes `,"key":` (or `"key":`) into the object of `handle` and returns the key's offset;
    /// nil when the frame is not current. Marks the object for sorting when the key does not
    /// come after the previous one.
    func beginMember(_ key: String, in handle: FrameHandle) -> Int? {
        guard isCurrent(handle) else { return nil }
        let index = handle.index
        if frames[index].count > 0 { bytes.append(UInt8(ascii: ",")) }
        frames[index].count += 1
        let keyStart = bytes.count
        let isUnescaped = JSONEscaping.appendQuoted(key, to: &bytes)
        let keyEnd = bytes.count
        var prefix: UInt64 = 0
        for offset in keyStart + 1..<keyStart + 9 {
            prefix = prefix << 8 | (offset < keyEnd - 1 ? UInt64(bytes[offset]) : 0)
        }
        let member = Member(keyStart: keyStart, keyEnd: keyEnd, isUnescaped: isUnescaped, prefix: prefix)
        bytes.append(UInt8(ascii: ":"))
        if members.count > frames[index].firstMember, let previous = members.last, compareKeys(previous, member) >= 0 {
            frames[index].needsRebuild = true
        }
        members.append(member)
        return keyStart
    }

    /// Writes the comma before an element of the array of `handle` and returns the element's
    /// index; nil when the frame is not current.
    func beginElement(in handle: FrameHandle) -> Int? {
        guard isCurrent(handle) else { return nil }
        let count = frames[handle.index].count
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        frames[handle.index].count = count + 1
        return count
    }

    /// Begins a member or element whose value `child` will write out of line, returning `child`.
    func attach(_ child: JSONByteWriter, key: String?, in handle: FrameHandle) -> JSONByteWriter {
        let begun = key.map { beginMember($0, in: handle) } ?? beginElement(in: handle)
        precondition(begun != nil, "A container was used after its value finished encoding.")
        let frame = frames[handle.index]
        let position = frame.isObject ? members.count - 1 - frame.firstMember : bytes.count
        children.append(Child(position: position, writer: child))
        frames[handle.index].needsRebuild = true
        return child
    }

    /// Where the writer stood before a value began.
    struct Checkpoint {
        /// The bytes written.
        let byteCount: Int
        /// The frames open.
        let frameCount: Int
        /// The members begun.
        let memberCount: Int
        /// The children attached.
        let childCount: Int
        /// The innermost frame as it was.
        let innermost: Frame?
    }

    /// The state to return to if the next value fails.
    func checkpoint() -> Checkpoint {
        Checkpoint(
            byteCount: bytes.count, frameCount: frames.count, memberCount: members.count, childCount: children.count,
            innermost: frames.last)
    }

    /// Forgets everything written since `checkpoint`, so that a value whose encoding threw
    /// (and was caught with `try?` by a hand-written `encode(to:)`) leaves no trace, as in
    /// Foundation's encoder.
    func rollBack(to checkpoint: Checkpoint) {
        frames.removeLast(Swift.max(frames.count - checkpoint.frameCount, 0))
        if let innermost = checkpoint.innermost, frames.count == checkpoint.frameCount {
            frames[frames.count - 1] = innermost
        }
        members.removeLast(Swift.max(members.count - checkpoint.memberCount, 0))
        children.removeLast(Swift.max(children.count - checkpoint.childCount, 0))
        bytes.removeLast(Swift.max(bytes.count - checkpoint.byteCount, 0))
    }

    /// Closes the innermost frame.
    func closeTopFrame() {
        guard let frame = frames.popLast() else { return }
        if frame.needsRebuild { frame.isObject ? rebuildObject(frame) : rebuildArray(frame) }
        members.removeLast(members.count - frame.firstMember)
        children.removeLast(children.count - frame.firstChild)
        bytes.append(frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
    }

    /// Closes every frame and returns the finished value (`{}` if nothing was written), valid
    /// while this writer lives and is not written to.
    func finish() -> UnsafeBufferPointer<UInt8> {
        while !frames.isEmpty { closeTopFrame() }
        if bytes.count == 0 { appendASCII("{}") }
        return bytes.contents
    }

    private func rebuildObject(_ frame: Frame) {
        let first = frame.firstMember
        let count = members.count - first
        withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { buffer in
            var order = buffer
            for rank in 0..<count { order.initializeElement(at: rank, to: rank) }
            if count <= 16 {
                // Insertion sort: stable, and the fastest for the few members of a message.
                for rank in 1..<Swift.max(count, 1) {
                    let member = order[rank]
                    var slot = rank
                    while slot > 0, compareKeys(members[first + member], members[first + order[slot - 1]]) < 0 {
                        order[slot] = order[slot - 1]
                        slot -= 1
                    }
                    order[slot] = member
                }
            } else {
                order.sort { lhs, rhs in
                    let comparison = compareKeys(members[first + lhs], members[first + rhs])
                    return comparison != 0 ? comparison < 0 : lhs < rhs
                }
            }
            // Of repeated keys only the last written survives, as in Foundation's encoder: mark
            // the others (as -1) while the keys are still in the buffer.
            for rank in 0..<Swift.max(count - 1, 0)
            where compareKeys(members[first + order[rank]], members[first + order[rank + 1]]) == 0 {
                order[rank] = -1
            }
            var childAtMember: [Int: JSONByteWriter] = [:]
            for child in children[frame.firstChild...] { childAtMember[child.position] = child.writer }
            let regionStart = frame.start + 1
            let regionEnd = bytes.count
            scratch.removeAll()
            scratch.append(UnsafeBufferPointer(rebasing: bytes.contents[regionStart..<regionEnd]))
            bytes.removeLast(regionEnd - regionStart)
            var isFirst = true
            for rank in 0..<count where order[rank] >= 0 {
                let member = order[rank]
                if !isFirst { bytes.append(UInt8(ascii: ",")) }
                isFirst = false
                let from = members[first + member].keyStart - regionStart
                let to = (member + 1 < count ? members[first + member + 1].keyStart - 1 : regionEnd) - regionStart
                bytes.append(UnsafeBufferPointer(rebasing: scratch.contents[from..<to]))
                if let child = childAtMember[member] { bytes.append(child.finish()) }
            }
        }
    }

    private func rebuildArray(_ frame: Frame) {
        let regionStart = frame.start + 1
        let regionEnd = bytes.count
        scratch.removeAll()
        scratch.append(UnsafeBufferPointer(rebasing: bytes.contents[regionStart..<regionEnd]))
        bytes.removeLast(regionEnd - regionStart)
        var copied = 0
        for child in children[frame.firstChild...] {
            let offset = child.position - regionStart
            bytes.append(UnsafeBufferPointer(rebasing: scratch.contents[copied..<offset]))
            bytes.append(child.writer.finish())
            copied = offset
        }
        bytes.append(UnsafeBufferPointer(rebasing: scratch.contents[copied...]))
    }

    /// Orders two keys by their UTF-8 bytes (so by Unicode scalars, without normalization), as
    /// Foundation's `.sortedKeys` does; keys written with escapes are unescaped first.
    private func compareKeys(_ lhs: Member, _ rhs: Member) -> Int {
        guard lhs.isUnescaped, rhs.isUnescaped else {
            let (left, right) = (key(at: lhs.keyStart).utf8, key(at: rhs.keyStart).utf8)
            return left.elementsEqual(right) ? 0 : left.lexicographicallyPrecedes(right) ? -1 : 1
        }
        if lhs.prefix != rhs.prefix { return lhs.prefix < rhs.prefix ? -1 : 1 }
        let buffer = bytes.contents
        let (leftCount, rightCount) = (lhs.keyEnd - lhs.keyStart - 2, rhs.keyEnd - rhs.keyStart - 2)
        // Offset 0 is the opening quote.
        var offset = 1
        while offset <= Swift.min(leftCount, rightCount) {
            let (left, right) = (buffer[lhs.keyStart + offset], buffer[rhs.keyStart + offset])
            if left != right { return left < right ? -1 : 1 }
            offset += 1
        }
        return leftCount == rightCount ? 0 : leftCount < rightCount ? -1 : 1
    }
}
