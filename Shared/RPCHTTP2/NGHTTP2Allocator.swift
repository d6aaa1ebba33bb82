#if canImport(Glibc)
internal import Glibc
#endif

/// The nghttp2 allocator of one HTTP/2 session (its `nghttp2_mem` hooks in ``HTTP2Session``):
/// freed blocks of the common sizes go onto a free list per size and are handed out again, instead of a `malloc` and a `free` each — nghttp2 allocates and frees
/// about a dozen small blocks per stream (the stream, its frames, header copies).
///
/// Every block starts with a 16-byte header holding its size class (-1 for a block larger than
/// the largest class, which comes from and goes back to `malloc`), so blocks stay 16-byte
/// aligned and a free needs no size. At most ``keptPerClass`` blocks wait per class (fewer of the
/// large ones: at most ~120 KiB per session); the rest go back to the system, and whatever
/// waits is freed with the session.
///
/// Not thread-safe: used by its session, on the session's thread (and by the thread that ends
/// the session, once no other uses it).
final class NGHTTP2Allocator {
    /// The payload size of the smallest class; each class is twice the one before.
    static let smallestClassSize = 64
    /// Payload sizes of the classes: 64 B to 4 KiB.
    static let classSizes = (0..<7).map { smallestClassSize << $0 }
    /// How many free blocks each class keeps.
    static let keptPerClass = [128, 128, 64, 32, 16, 8, 8]
    private static let headerSize = 16

    /// Free blocks (their headers), `keptPerClass[c]` slots for class `c`.
    private let lists: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    /// How many free blocks each class holds.
    private let counts: UnsafeMutablePointer<Int>
    /// Per class, where its slots start in `lists` and how many it keeps: the static tables
    /// copied once, so that an allocation reads no global (on Linux every read of a `static let`
    /// is a call into `swift_once`, and an array's a retain and bounds checks besides).
    private let slots: UnsafeMutablePointer<(first: Int, kept: Int)>
    private let classCount = NGHTTP2Allocator.classSizes.count
    private let largestClassSize = NGHTTP2Allocator.classSizes[NGHTTP2Allocator.classSizes.count - 1]

    init() {
        let total = Self.keptPerClass.reduce(0, +)
        lists = .allocate(capacity: total)
        lists.initialize(repeating: nil, count: total)
        counts = .allocate(capacity: classCount)
        counts.initialize(repeating: 0, count: classCount)
        slots = .allocate(capacity: classCount)
        var first = 0
        for (sizeClass, kept) in Self.keptPerClass.enumerated() {
            (slots + sizeClass).initialize(to: (first, kept))
            first += kept
        }
    }

    deinit {
        for sizeClass in 0..<classCount {
            for index in 0..<counts[sizeClass] { Glibc.free(lists[slots[sizeClass].first + index]) }
        }
        lists.deallocate()
        counts.deallocate()
        slots.deallocate()
    }

    /// How many free blocks wait in the lists (for tests).
    var freeBlocks: Int { (0..<classCount).reduce(0) { $0 + counts[$1] } }

    /// A block of at least `size` bytes, or nil when the system has no memory.
    func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
        let sizeClass = sizeClass(for: size)
        if sizeClass >= 0, counts[sizeClass] > 0 {
            counts[sizeClass] -= 1
            return lists[slots[sizeClass].first + counts[sizeClass]]! + Self.headerSize
        }
        let payload = sizeClass >= 0 ? Self.smallestClassSize << sizeClass : size
        guard let block = malloc(payload + Self.headerSize) else { return nil }
        block.storeBytes(of: sizeClass, as: Int.self)
        return block + Self.headerSize
    }

    /// A zeroed block for `count` elements of `size` bytes; nil on overflow or no memory.
    func allocateZeroed(count: Int, size: Int) -> UnsafeMutableRawPointer? {
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        guard !overflow, let pointer = allocate(total) else { return nil }
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: total)
        return pointer
    }

    /// Gives a block back (nil is ignored, as `free` does).
    func free(_ pointer: UnsafeMutableRawPointer?) {
        guard let pointer else { return }
        let block = pointer - Self.headerSize
        let sizeClass = block.load(as: Int.self)
        if sizeClass >= 0, counts[sizeClass] < slots[sizeClass].kept {
            lists[slots[sizeClass].first + counts[sizeClass]] = block
            counts[sizeClass] += 1
        } else {
            Glibc.free(block)
        }
    }

    /// `realloc`: the block itself while `size` fits its class, else a new one with the old
    /// contents; nil (the old block untouched) when the system has no memory.
    func reallocate(_ pointer: UnsafeMutableRawPointer?, to size: Int) -> UnsafeMutableRawPointer? {
        guard let pointer else { return allocate(size) }
        let block = pointer - Self.headerSize
        let sizeClass = block.load(as: Int.self)
        if sizeClass < 0 {
            guard let moved = realloc(block, size + Self.headerSize) else { return nil }
            return moved + Self.headerSize
        }
        let payload = Self.smallestClassSize << sizeClass
        if size <= payload { return pointer }
        guard let grown = allocate(size) else { return nil }
        grown.copyMemory(from: pointer, byteCount: payload)
        free(pointer)
        return grown
    }

    /// The smallest class that holds `size` bytes, or -1 when none does: from the bit length of
    /// `size - 1`, the classes being powers of two.
    private func sizeClass(for size: Int) -> Int {
        guard size > Self.smallestClassSize else { return 0 }
        guard size <= largestClassSize else { return -1 }
        return (Int.bitWidth - (size - 1).leadingZeroBitCount) - Self.smallestClassSize.trailingZeroBitCount
    }
}
