// The locks and atomics of the RPC core, for every platform its client side ships on.
//
// `Synchronization`'s `Mutex` and `Atomic` need iOS 18 / macOS 15; StorefrontKit (an app's
// client library) builds this target for iOS 16 / macOS 13. On Linux the two names are the
// standard types themselves — no wrapper, so the servers' hot paths pay nothing — and on Apple
// platforms a small type with the same spelling wraps `OSAllocatedUnfairLock` (iOS 16+), so
// one source serves both: `PortableMutex(State())`, `withLock { … }`, `load(ordering:)`.

#if canImport(os)
import os

/// A value behind `OSAllocatedUnfairLock`, spelt as `Synchronization.Mutex` is.
/// Thread-safe: the value is only reached under the lock.
package struct PortableMutex<Value>: ~Copyable, @unchecked Sendable {
    // @unchecked: the lock hands the value to one closure at a time, as `Mutex` does.
    private let lock: OSAllocatedUnfairLock<Value>

    /// A mutex holding `value`.
    package init(_ value: sending Value) {
        lock = OSAllocatedUnfairLock(uncheckedState: value)
    }

    /// Runs `body` with the value, under the lock.
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        var failure: Failure?
        let result: Result? = lock.withLockUnchecked { value in
            do throws(Failure) {  // typed: a plain `do` would catch `any Error` (no FullTypedThrows in Swift 6)
                return try body(&value)
            } catch {
                failure = error
                return nil
            }
        }
        if let failure { throw failure }
        return result!  // set whenever `body` returned
    }
}

/// An integer or flag behind a ``PortableMutex``, spelt as `Synchronization.Atomic` is
/// (orderings are accepted and ignored: the lock orders everything). Thread-safe.
package struct PortableAtomic<Value: Sendable>: ~Copyable, Sendable {
    private let mutex: PortableMutex<Value>

    /// An atomic holding `value`.
    package init(_ value: Value) { mutex = PortableMutex(value) }

    /// The current value.
    package func load(ordering: PortableMemoryOrdering) -> Value { mutex.withLock { $0 } }

    /// Replaces the value.
    package func store(_ value: Value, ordering: PortableMemoryOrdering) { mutex.withLock { $0 = value } }
}

extension PortableAtomic where Value: FixedWidthInteger {
    /// Adds `operand` with wrapping; returns the values before and after.
    package func wrappingAdd(_ operand: Value, ordering: PortableMemoryOrdering) -> (oldValue: Value, newValue: Value) {
        mutex.withLock { value in
            let old = value
            value = old &+ operand
            return (old, value)
        }
    }
}

/// The memory orderings `Synchronization` call sites name; a lock gives every one of them.
package enum PortableMemoryOrdering {
    /// No ordering beyond atomicity.
    case relaxed
    /// Later reads see what was released before.
    case acquiring
    /// Earlier writes are seen by acquiring readers.
    case releasing
}

#else
package import Synchronization

/// `Synchronization.Mutex` itself on this platform (see the file's opening comment).
package typealias PortableMutex<Value: ~Copyable> = Mutex<Value>

/// `Synchronization.Atomic` itself on this platform (see the file's opening comment).
package typealias PortableAtomic<Value: AtomicRepresentable> = Atomic<Value>
#endif
