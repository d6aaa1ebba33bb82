import Foundation

/// A growable byte buffer for ``JSONByteWriter``: appends are a capacity check and a copy
/// (an `[UInt8]` also checks uniqueness on every append), and the finished storage becomes a
/// `Data` without copying.
///
/// Noncopyable, so its storage has exactly one owner.
struct JSONByteBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>?
    /// The number of bytes written.
    private(set) var count = 0
    private var capacity = 0

    /// Creates an empty buffer; storage is allocated on the first append.
    init() {}

    deinit { base?.deallocate() }

    /// The bytes written, valid until the next mutation.
    var contents: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// The byte at `offset`, which must be below ``count``.
    subscript(offset: Int) -> UInt8 {
        precondition(offset >= 0 && offset < count, "JSONByteBuffer index out of range")
        return base.unsafelyUnwrapped[offset]
    }

    /// Makes room for `extra` more bytes and returns where they go.
    mutating func reserve(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        if count + extra > capacity { grow(to: count + extra) }
        return base.unsafelyUnwrapped + count
    }

    /// Counts `written` bytes, stored through ``reserve(_:)``, as part of the buffer.
    mutating func commit(_ written: Int) {
        precondition(count + written <= capacity, "JSONByteBuffer overflow")
        count += written
    }

    private mutating func grow(to minimum: Int) {
        let newCapacity = Swift.max(minimum, capacity * 2, 64)
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        if let base {
            storage.initialize(from: base, count: count)
            base.deallocate()
        }
        base = storage
        capacity = newCapacity
    }

    /// Appends one byte.
    mutating func append(_ byte: UInt8) {
        reserve(1).initialize(to: byte)
        count += 1
    }

    /// Appends bytes, which must not be this buffer's own.
    mutating func append(_ other: UnsafeBufferPointer<UInt8>) {
        guard let source = other.baseAddress, other.count > 0 else { return }
        reserve(other.count).initialize(from: source, count: other.count)
        count += other.count
    }

    /// Appends ASCII text.
    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Drops the last `k` bytes.
    mutating func removeLast(_ k: Int) {
        precondition(k >= 0 && k <= count, "JSONByteBuffer cannot remove more than it holds")
        count -= k
    }

    /// Empties the buffer, keeping its storage.
    mutating func removeAll() { count = 0 }

    /// Hands the bytes over to a `Data` without copying and leaves the buffer empty.
    mutating func takeData() -> Data {
        guard let base, count > 0 else { return Data() }
        self.base = nil
        defer { (count, capacity) = (0, 0) }
        return Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }
}
