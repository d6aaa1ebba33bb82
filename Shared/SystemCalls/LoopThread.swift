#if canImport(Glibc)
internal import Glibc
#endif
import Synchronization

/// Which threads are event loops: a loop marks its own thread when it starts, and code that
/// may run short work right where it is called, rather than hand it to a thread of its own
/// (``Storage``'s short reads), asks whether it runs on one and which.
///
/// A thread-local index, not a flag: work kept per loop (a database connection each) is found
/// by it without a lock or a lookup. Indices are handed out in start order and never reused,
/// so a process that starts loops again (tests) sees them grow; users bound what they keep by
/// taking the index modulo a capacity of their own.
package enum LoopThread {
    /// The thread-specific slot: the index + 1, as a pointer's bit pattern (nil: not a loop).
    /// Not a speed choice: a pthread key is the thread-local storage Swift has on Linux; the
    /// pointer only carries an integer, nothing is read through it.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key, nil)
        precondition(created == 0, "pthread_key_create failed: \(created)")
        return key
    }()
    /// The next index to hand out.
    private static let nextIndex = Atomic<Int>(0)

    /// Marks the calling thread as an event loop's and returns its index; call it once, first
    /// thing on the loop's thread.
    @discardableResult
    package static func markCurrent() -> Int {
        let index = nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: index + 1))
        return index
    }

    /// The index of the event loop whose thread calls this, or nil on any other thread.
    package static var currentIndex: Int? {
        guard let value = pthread_getspecific(key) else { return nil }
        return Int(bitPattern: value) - 1
    }
}
