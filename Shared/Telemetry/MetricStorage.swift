internal import Synchronization

/// A fixed number of 64-bit counters that any thread adds to without a lock: the cells of
/// a histogram's buckets, or of a counter per status code.
///
/// `Atomic` cannot live in an array (it is not copyable), so the cells are one allocation
/// of atomics, made and freed with the object — C-style storage for a type Swift cannot put
/// in a collection, not a speed choice.
final class AtomicCells: Sendable {
    /// The cells, `count` of them, initialised to zero.
    // Storage for atomics no collection can hold (`Atomic` is ~Copyable), not a speed choice.
    private nonisolated(unsafe) let cells: UnsafeMutablePointer<Atomic<UInt64>>
    /// How many cells there are.
    let count: Int

    /// `count` cells at zero.
    init(count: Int) {
        precondition(count > 0)
        self.count = count
        cells = .allocate(capacity: count)
        for index in 0..<count { (cells + index).initialize(to: Atomic(0)) }
    }

    deinit {
        cells.deinitialize(count: count)
        cells.deallocate()
    }

    /// Adds `amount` to cell `index`.
    @inline(__always)
    func add(_ amount: UInt64, at index: Int) {
        cells[index].wrappingAdd(amount, ordering: .relaxed)
    }

    /// The value of cell `index` now.
    func load(_ index: Int) -> UInt64 {
        cells[index].load(ordering: .relaxed)
    }
}
