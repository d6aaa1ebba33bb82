import Dispatch
import Foundation
import Synchronization

/// The deadlines of the web edge's calls, Connect and gRPC-Web alike: each call schedules what
/// ends it when its deadline passes, and cancels that when it ends first. The gRPC path has its
/// event loop's timers for this; a web call is served in-process (``RPC/LocalCall``), so it
/// needs its own clock.
///
/// One thread for the whole process sleeps until the earliest deadline. Scheduling and
/// cancelling take a lock and touch a heap and a table, with no task and no allocation held past
/// the call: a cancelled entry's action is dropped at once, and its heap slot is reclaimed when
/// the heap grows past twice the live entries — so memory follows the calls in flight, not the
/// calls made within a deadline's span (which per-call sleeping tasks would hold until their
/// time, every unary call having the 10 s default). Thread-safe.
final class ConnectDeadlineTimer: Sendable {
    /// The timer of every web call in this process.
    static let shared = ConnectDeadlineTimer()

    private struct Entry {
        let deadline: ContinuousClock.Instant
        let id: UInt64
    }

    /// A binary min-heap of deadlines (with cancelled entries left in it until they surface or
    /// the heap is compacted) and the actions of the live ones.
    private struct State {
        var heap: [Entry] = []
        var actions: [UInt64: @Sendable () -> Void] = [:]
        var lastID: UInt64 = 0
        var threadStarted = false

        mutating func push(_ entry: Entry) {
            heap.append(entry)
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[child].deadline < heap[parent].deadline else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        mutating func popFirst() {
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
            siftDown(from: 0)
        }

        mutating func siftDown(from start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1
                guard left < heap.count else { return }
                let right = left + 1
                let child = right < heap.count && heap[right].deadline < heap[left].deadline ? right : left
                guard heap[child].deadline < heap[parent].deadline else { return }
                heap.swapAt(child, parent)
                parent = child
            }
        }

        /// Drops the cancelled entries once they outnumber the live ones (amortised O(1) per
        /// cancellation).
        mutating func compactIfSparse() {
            guard heap.count > 64, heap.count > 2 * actions.count else { return }
            let live = actions
            heap.removeAll { live[$0.id] == nil }
            for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
        }
    }

    private let state = Mutex(State())
    /// Wakes the thread when an earlier deadline arrives; extra signals only cost a spin.
    private let wake = DispatchSemaphore(value: 0)

    /// Runs `action` (on the timer's thread; it must not block) once `deadline` has passed,
    /// unless ``cancel(_:)`` is called with the returned id first.
    func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, isEarliest, startThread) = state.withLock { state in
            state.lastID += 1
            let id = state.lastID
            state.actions[id] = action
            state.push(Entry(deadline: deadline, id: id))
            let startThread = !state.threadStarted
            state.threadStarted = true
            return (id, state.heap[0].id == id, startThread)
        }
        if startThread {
            // Started on first use and never stopped: it sleeps while no deadline is pending.
            Thread.detachNewThread { [self] in run() }
        } else if isEarliest {
            wake.signal()
        }
        return id
    }

    /// Forgets the action scheduled as `id`; nothing happens if it already ran.
    func cancel(_ id: UInt64) {
        state.withLock { state in
            guard state.actions.removeValue(forKey: id) != nil else { return }
            state.compactIfSparse()
        }
    }

    /// The number of actions waiting, and of entries the heap holds for them (tests).
    var pendingCount: Int { state.withLock { $0.actions.count } }
    var heapCount: Int { state.withLock { $0.heap.count } }

    private func run() {
        while true {
            let (due, next) = state.withLock { state -> ([@Sendable () -> Void], ContinuousClock.Instant?) in
                let now = ContinuousClock.now
                var due: [@Sendable () -> Void] = []
                while let first = state.heap.first {
                    guard let action = state.actions[first.id] else {
                        state.popFirst()
                        continue
                    }
                    guard first.deadline <= now else { break }
                    state.popFirst()
                    state.actions[first.id] = nil
                    due.append(action)
                }
                return (due, state.heap.first?.deadline)
            }
            for action in due { action() }
            guard let next else {
                wake.wait()
                continue
            }
            let (seconds, attoseconds) = (next - ContinuousClock.now).components
            guard seconds >= 0, seconds > 0 || attoseconds > 0 else { continue }
            let nanoseconds = seconds > 86_400 ? 86_400_000_000_000 : Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000) + 1
            _ = wake.wait(timeout: .now() + .nanoseconds(nanoseconds))
        }
    }
}
