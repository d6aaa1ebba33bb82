#if canImport(Glibc)
internal import Glibc
#endif
private import CLinux
internal import Foundation
internal import Synchronization
package import SystemCalls

/// Something registered with an ``EventLoop`` for readiness events on a descriptor.
/// Called on the loop's thread only.
protocol EventHandler: AnyObject {
    /// Handles readiness: `readable`, `writable`, or an error/hang-up (reported as both).
    func handleEvent(readable: Bool, writable: Bool, hangup: Bool)
}

/// One epoll loop on its own thread. Connections registered here live on it for good.
///
/// Thread-safety: ``execute(_:)`` may be called from any thread; everything else is called on
/// the loop's own thread only (checked with ``inEventLoop`` in debug builds).
package final class EventLoop: TaskExecutor, @unchecked Sendable {
    // Invariant for @unchecked Sendable: `handlers`, `timers` and `timerSlots` are touched
    // only on the loop thread; cross-thread state lives in `queue`, behind a Mutex.
    /// Closures kept in arrays are wrapped: a bare closure in a generic container is stored
    /// behind a reabstraction thunk, an allocation on the way in and another on the way out.
    private struct Work {
        let run: @Sendable () -> Void
    }

    private struct Action {
        let run: () -> Void
    }

    private struct Queue {
        var tasks: [Work] = []
        var sleeping = false
        var stopped = false
        /// Whether the loop has ended and closed `wakeFD`: nobody may write to it any more.
        var closed = false
    }

    private let epollFD: Int32
    private let wakeFD: Int32
    private let queue = Mutex(Queue())
    private var handlers: [Int32: any EventHandler] = [:]
    // Loop state, here and in the connections and sockets, is touched on the loop thread only
    // (``assertInLoop()``) and never re-entrantly: lists are swapped or copied before their
    // actions run, so a callback that changes a list does not overlap an access to it (Swift's
    // exclusivity check, on in debug builds, would stop it).
    private var timers = TimerHeap()
    /// The actions of pending timers, by slot; a timer's id is its slot and the slot's
    /// generation, so a slot is reused at once and an id of a finished timer matches nothing.
    private var timerSlots = TimerSlots()
    /// Cancelled timers still in `timers`.
    private var cancelledTimers = 0
    /// The loop thread's `pthread_t` (0 until it runs): read on every ``inEventLoop`` from any
    /// thread, so an atomic rather than a lock.
    private let threadID = Atomic<UInt>(0)
    private let finished = Mutex<[CheckedContinuation<Void, Never>]?>([])
    /// A name for logs and thread names.
    package let name: String
    /// Until when (monotonic ns) the loop polls instead of sleeping; 0 when it does not. Loop only.
    private var spinUntil: UInt64 = 0
    /// Unary calls whose handlers have started on this loop's server connections and whose
    /// streams are still open (streams are not counted: a watch may stay open for hours with
    /// nothing to do). Loop only.
    private(set) var openCalls = 0
    /// The most open calls at which ``expectWorkSoon()`` still polls (the call just started or
    /// answered among them: its stream closes only once its answer is written).
    static let pollingCallLimit = 4

    /// Polls instead of sleeping for a short while: call after starting work whose answer is
    /// expected soon. Loop only.
    ///
    /// Only while few unary calls are open on the loop: a lone caller's next request, or a quick
    /// handler's answer, comes within microseconds and a sleeping loop would need a wake-up
    /// for it. With many open, the loop has work coming anyway, and polling only takes the
    /// cores from the threads that produce it — the handlers' and, on a shared machine, the
    /// callers' (catalog-svc's GetProduct straight at 4×16 under `Benchmarks/gateway-ab` is
    /// faster without it; see Benchmarks/HISTORY.md, 2026-11-25, third session).
    /// Returns whether it polls.
    @discardableResult
    func expectWorkSoon() -> Bool {
        assertInLoop()
        guard openCalls <= Self.pollingCallLimit else { return false }
        spinUntil = System.monotonicNanoseconds() &+ 50_000
        return true
    }

    /// Whether the loop polls instead of sleeping when it next waits. Loop only.
    var isPolling: Bool { spinUntil > 0 && System.monotonicNanoseconds() < spinUntil }

    /// Counts unary calls started (`delta` > 0) or closed (< 0) on this loop. Loop only.
    func countOpenCalls(_ delta: Int) {
        assertInLoop()
        openCalls += delta
        assert(openCalls >= 0, "a call closed that was never counted")
    }

    /// Actions to run once this iteration's events, tasks and timers are handled, before the
    /// loop waits again: connections queue their socket writes here, so the output of many
    /// calls handled in one iteration leaves in one write. Loop only.
    private var endOfIteration: [Action] = []
    /// The actions being run; swapped with `endOfIteration` so neither list is reallocated.
    private var runningEndOfIteration: [Action] = []
    /// The queued tasks being run; swapped with the queue's list under its lock. Loop only.
    private var runningTasks: [Work] = []

    /// Runs `action` at the end of this loop iteration (see `endOfIteration`). Loop only.
    func atEndOfIteration(_ action: @escaping () -> Void) {
        endOfIteration.append(Action(run: action))
    }

    /// Scratch space for socket reads, shared by every connection of this loop. Loop only.
    var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// The CPU the loop's thread runs on alone, if it is pinned to one.
    package let cpu: Int?

    /// Creates a loop and starts its thread; with `cpu`, the thread runs on that CPU only.
    package init(name: String, cpu: Int? = nil) throws(SystemError) {
        self.name = name
        self.cpu = cpu
        epollFD = try System.call("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        wakeFD = try System.call("eventfd") { eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC)) }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeFD
        _ = try System.call("epoll_ctl") { epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) }
        let thread = Thread { [self] in self.run() }
        thread.name = name
        thread.start()
    }

    /// Whether the caller runs on this loop's thread.
    package var inEventLoop: Bool {
        let id = threadID.load(ordering: .acquiring)
        return id != 0 && pthread_equal(id, pthread_self()) != 0
    }

    /// Stops a debug build when the caller is not on this loop's thread: every loop-only entry
    /// point of a connection, stream or call calls it (like swift-nio's `assertInEventLoop`).
    /// Compiles to nothing in release builds, where `assert` is not evaluated.
    @inline(__always)
    func assertInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inEventLoop, "called off the thread of event loop \(name)", file: file, line: line)
    }

    /// Runs `work` on the loop thread soon; callable from any thread.
    package func execute(_ work: @escaping @Sendable () -> Void) {
        _ = queueTask(work, unlessStopping: false)
    }

    /// Runs a Swift concurrency job on the loop thread (the loop as a task executor); once the
    /// loop is stopping, on the global pool instead, so no task is stranded.
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = queueTask({ job.runSynchronously(on: self.asUnownedTaskExecutor()) }, unlessStopping: true)
        if !accepted { globalConcurrentExecutor.enqueue(job) }
    }

    /// Queues `work` and wakes the loop if it sleeps; with `unlessStopping`, refuses (false)
    /// once a shutdown has begun.
    private func queueTask(_ work: @escaping @Sendable () -> Void, unlessStopping: Bool) -> Bool {
        queue.withLock { state in
            if unlessStopping && state.stopped { return false }
            // The thread has ended: nothing would run the work, and kept here it would keep what
            // it captured (a connection, which holds this loop) alive for good.
            if state.closed { return false }
            state.tasks.append(Work(run: work))
            if state.sleeping {
                state.sleeping = false
                signal(state)
            }
            return true
        }
    }

    /// Stops the loop after the tasks already queued; waits until its thread has ended.
    package func shutdown() async {
        await withCheckedContinuation { continuation in
            let alreadyDone = finished.withLock { waiters -> Bool in
                guard waiters != nil else { return true }
                waiters?.append(continuation)
                return false
            }
            if alreadyDone { continuation.resume(); return }
            queue.withLock { state in
                state.stopped = true
                signal(state)
            }
        }
    }

    /// Wakes the loop. Called with the queue lock held, so the loop cannot close `wakeFD`
    /// between the check and the write (a write to a closed, maybe reused, descriptor).
    private func signal(_ state: borrowing Queue) {
        guard !state.closed else { return }
        var one: UInt64 = 1
        // EAGAIN means the counter is already non-zero: the loop will wake anyway.
        _ = try? System.nonBlocking("write(eventfd)") { Glibc.write(wakeFD, &one, 8) }
    }

    // MARK: Loop-thread API

    /// Registers `handler` for readiness on `fd` (level-triggered).
    func register(_ fd: Int32, readable: Bool, writable: Bool, handler: any EventHandler) throws(SystemError) {
        assertInLoop()
        handlers[fd] = handler
        do {
            try control(EPOLL_CTL_ADD, fd, readable: readable, writable: writable)
        } catch {
            handlers[fd] = nil
            throw error
        }
    }

    /// Descriptors with a handler (for tests). Loop only.
    var registeredHandlerCount: Int { handlers.count }

    /// Changes which readiness `fd` is watched for.
    func modify(_ fd: Int32, readable: Bool, writable: Bool) {
        assertInLoop()
        try? control(EPOLL_CTL_MOD, fd, readable: readable, writable: writable)
    }

    /// Stops watching `fd`; call before closing it.
    func deregister(_ fd: Int32) {
        assertInLoop()
        handlers[fd] = nil
        // ENOENT (never added) is fine: the descriptor is not watched either way.
        _ = try? System.call("epoll_ctl(DEL)") { epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
    }

    /// Runs `action` on the loop thread after `delay`; returns an id for ``cancelTimer(_:)``.
    @discardableResult
    func scheduleTimer(after delay: Duration, _ action: @escaping () -> Void) -> UInt64 {
        schedule(.run(action), after: delay)
    }

    /// Tells `target` on the loop thread after `delay`, unless cancelled with the id this
    /// returns: a timer per call (a deadline) without a closure allocated per call. Loop only.
    @discardableResult
    func scheduleTimer(after delay: Duration, target: any LoopTimerTarget) -> UInt64 {
        schedule(.notify(target), after: delay)
    }

    /// ``scheduleTimer(after:target:)`` at a monotonic instant (ns, see
    /// ``instant(after:)``) the caller keeps. Loop only.
    @discardableResult
    func scheduleTimer(at deadline: UInt64, target: any LoopTimerTarget) -> UInt64 {
        schedule(.notify(target), at: deadline)
    }

    /// The monotonic instant (ns) `delay` from now, saturating.
    static func instant(after delay: Duration) -> UInt64 {
        let (deadline, overflow) = System.monotonicNanoseconds().addingReportingOverflow(delay.clockNanoseconds)
        return overflow ? .max : deadline
    }

    private func schedule(_ action: TimerAction, after delay: Duration) -> UInt64 {
        schedule(action, at: Self.instant(after: delay))
    }

    private func schedule(_ action: TimerAction, at deadline: UInt64) -> UInt64 {
        assertInLoop()
        let id = timerSlots.insert(action)
        timers.push(deadline: deadline, id: id)
        return id
    }

    /// Runs `action` on the loop thread after `delay`. Any thread.
    func scheduleAfter(_ delay: Duration, _ action: @escaping @Sendable () -> Void) {
        if inEventLoop {
            scheduleTimer(after: delay, action)
        } else {
            execute { self.scheduleTimer(after: delay, action) }
        }
    }

    /// Timers in the heap, cancelled ones included (for tests). Loop only.
    var timerHeapCount: Int { timers.count }

    /// Cancels a timer that has not fired yet.
    func cancelTimer(_ id: UInt64) {
        guard timerSlots.remove(id) != nil else { return }
        // A cancelled timer stays in the heap until its deadline. Calls cancel their deadline
        // timers (seconds away) within microseconds, so under load the heap would hold
        // seconds' worth of dead entries: drop them once they are the majority.
        cancelledTimers += 1
        if cancelledTimers > 64 && cancelledTimers * 2 > timers.count {
            timers.retain { timerSlots.contains($0) }
            cancelledTimers = 0
        }
    }

    private func control(_ operation: Int32, _ fd: Int32, readable: Bool, writable: Bool) throws(SystemError) {
        var event = epoll_event()
        event.events = (readable ? EPOLLIN.rawValue : 0) | (writable ? EPOLLOUT.rawValue : 0) | EPOLLRDHUP.rawValue
        event.data.fd = fd
        _ = try System.call("epoll_ctl") { epoll_ctl(epollFD, operation, fd, &event) }
    }

    private func run() {
        threadID.store(pthread_self(), ordering: .releasing)
        // Foundation does not always pass the name on to the OS thread; debuggers and `top -H`
        // show this one (at most 15 bytes).
        _ = storefront_name_current_thread(name)
        // Work that may run where it is called on a loop (a database's short reads) finds it so.
        LoopThread.markCurrent()
        // Refused (a CPU gone from the process's cpuset since start-up): the loop runs unpinned.
        if let cpu { System.runCurrentThread(on: [cpu]) }
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        while true {
            // Right after handing work to handlers, poll briefly instead of sleeping while few
            // calls are open (``expectWorkSoon()``): their answers usually come within
            // microseconds, and a sleeping loop needs a wake-up.
            let spinning = isPolling
            let (sleep, stop) = queue.withLock { state -> (Bool, Bool) in
                if state.tasks.isEmpty && !state.stopped {
                    state.sleeping = !spinning
                    return (!spinning, false)
                }
                return (false, state.stopped && state.tasks.isEmpty)
            }
            if stop { break }
            if !spinning { spinUntil = 0 }
            let timeout = sleep ? timers.millisecondsUntilNext(now: System.monotonicNanoseconds()) : 0
            // EINTR is retried by the wrapper; any other failure would be a programming error.
            let count = (try? System.call("epoll_wait") { epoll_wait(epollFD, &events, Int32(events.count), timeout) }) ?? 0
            queue.withLock { $0.sleeping = false }
            if count > 0 {
                for index in 0..<Int(count) {
                    let event = events[index]
                    let fd = event.data.fd
                    if fd == wakeFD {
                        var value: UInt64 = 0
                        _ = try? System.nonBlocking("read(eventfd)") { Glibc.read(wakeFD, &value, 8) }
                        continue
                    }
                    let flags = event.events
                    handlers[fd]?.handleEvent(
                        readable: flags & EPOLLIN.rawValue != 0,
                        writable: flags & EPOLLOUT.rawValue != 0,
                        hangup: flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0)
                }
            }
            runTasks()
            runTimers()
            while !endOfIteration.isEmpty {
                // Swapped with a spare list rather than copied: the lists keep their storage.
                swap(&endOfIteration, &runningEndOfIteration)
                for action in runningEndOfIteration { action.run() }
                runningEndOfIteration.removeAll(keepingCapacity: true)
            }
        }
        queue.withLock { state in
            state.closed = true
            System.close(wakeFD)
        }
        System.close(epollFD)
        // Let go of what is still registered or scheduled: connections hold their loop strongly,
        // so a connection left here (or captured by a timer) would keep both alive.
        handlers.removeAll()
        timerSlots = TimerSlots()
        timers = TimerHeap()
        let waiters = finished.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            defer { waiters = nil }
            return waiters ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs the queued tasks, and those they queue in turn (a resumed handler queueing its
    /// connection's flush), a few rounds at most so that sockets are not starved.
    private func runTasks() {
        for _ in 0..<3 {
            queue.withLock { state in swap(&state.tasks, &runningTasks) }
            if runningTasks.isEmpty { return }
            for task in runningTasks { task.run() }
            runningTasks.removeAll(keepingCapacity: true)
        }
    }

    private func runTimers() {
        guard !timers.isEmpty else { return }
        let now = System.monotonicNanoseconds()
        while let id = timers.popExpired(now: now) {
            if let action = timerSlots.remove(id) {
                action()
            } else {
                cancelledTimers = max(0, cancelledTimers - 1)
            }
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds, 0 for a negative one: the unit of the loops' clock
    /// (``System/monotonicNanoseconds()``).
    /// Saturates at `UInt64.max` (584 years) rather than trapping.
    var clockNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = UInt64(max(0, seconds)).multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, sumOverflow) = whole.addingReportingOverflow(UInt64(max(0, attoseconds / 1_000_000_000)))
        return overflow || sumOverflow ? .max : sum
    }
}

/// An object a loop timer tells when it fires, instead of running a closure: a call's
/// deadline timer then costs no allocation.
protocol LoopTimerTarget: AnyObject {
    /// The timer fired. Loop thread.
    func loopTimerFired()
}

/// What a timer does when it fires. A closure kept in this enum, rather than bare in a generic
/// container, is stored as it is: a bare one is stored behind a reabstraction thunk, one
/// allocation in and one out.
enum TimerAction {
    case run(() -> Void)
    case notify(any LoopTimerTarget)

    /// Runs the closure or tells the target.
    func callAsFunction() {
        switch self {
        case .run(let action): action()
        case .notify(let target): target.loopTimerFired()
        }
    }
}

/// The actions of an event loop's pending timers, in reusable slots (no hashing per timer).
/// An id is `generation << 32 | slot`; removing bumps the slot's generation, so the id of a
/// fired or cancelled timer no longer matches even after the slot is reused.
struct TimerSlots {
    private var actions: [TimerAction?] = []
    private var generations: [UInt32] = []
    private var free: [Int] = []

    /// Stores an action; returns its id.
    mutating func insert(_ action: TimerAction) -> UInt64 {
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            actions[slot] = action
        } else {
            slot = actions.count
            actions.append(action)
            generations.append(0)
        }
        return UInt64(generations[slot]) << 32 | UInt64(slot)
    }

    /// Whether `id` is a pending timer.
    func contains(_ id: UInt64) -> Bool {
        let slot = Int(id & 0xFFFF_FFFF)
        return slot < actions.count && generations[slot] == UInt32(id >> 32) && actions[slot] != nil
    }

    /// Removes a pending timer; returns its action, or nil when `id` is not pending.
    @discardableResult
    mutating func remove(_ id: UInt64) -> TimerAction? {
        guard contains(id) else { return nil }
        let slot = Int(id & 0xFFFF_FFFF)
        let action = actions[slot]
        actions[slot] = nil
        generations[slot] &+= 1
        free.append(slot)
        return action
    }
}

/// A binary min-heap of timer deadlines; cancelled timers are skipped when popped.
struct TimerHeap {
    private var entries: [(deadline: UInt64, id: UInt64)] = []

    /// Whether no timer is pending.
    var isEmpty: Bool { entries.isEmpty }

    /// How many timers are in the heap.
    var count: Int { entries.count }

    /// Keeps only the timers whose id passes `keep`.
    mutating func retain(_ keep: (UInt64) -> Bool) {
        entries.removeAll { !keep($0.id) }
        entries.sort { $0.deadline < $1.deadline }  // a sorted array is a valid min-heap
    }

    /// Adds a timer.
    mutating func push(deadline: UInt64, id: UInt64) {
        entries.append((deadline, id))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest timer if it is due.
    mutating func popExpired(now: UInt64) -> UInt64? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        entries.swapAt(0, entries.count - 1)
        entries.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count && entries[left].deadline < entries[smallest].deadline { smallest = left }
            if right < entries.count && entries[right].deadline < entries[smallest].deadline { smallest = right }
            if smallest == parent { break }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
        return first.id
    }

    /// The epoll timeout until the earliest timer: -1 for none, rounded up to whole milliseconds.
    func millisecondsUntilNext(now: UInt64) -> Int32 {
        guard let first = entries.first else { return -1 }
        if first.deadline <= now { return 0 }
        return Int32(min((first.deadline - now + 999_999) / 1_000_000, 60_000))
    }
}

/// A fixed set of event loops; connections are spread over them round-robin.
package final class EventLoopGroup: Sendable {
    /// The loops.
    package let loops: [EventLoop]
    private let cursor = Atomic<Int>(0)

    /// Starts `count` loops (default: one per core the process may use). With `pinned`, each
    /// loop's thread runs on one of those cores only, loop `i` on the `i`-th (round the list
    /// again when there are more loops than cores).
    package init(count: Int = System.coreCount, name: String = "loop", pinned: Bool = false) throws(SystemError) {
        System.mallocTuned
        let cpus = pinned ? System.allowedCPUs : []
        var loops: [EventLoop] = []
        for index in 0..<max(1, count) {
            loops.append(try EventLoop(name: "\(name)-\(index)", cpu: cpus.isEmpty ? nil : cpus[index % cpus.count]))
        }
        self.loops = loops
    }

    /// The index of the loop whose thread calls this, or nil off the group's threads.
    package func indexOfCurrentLoop() -> Int? {
        loops.firstIndex { $0.inEventLoop }
    }

    /// The next loop, round-robin.
    package func next() -> EventLoop {
        loops[cursor.wrappingAdd(1, ordering: .relaxed).oldValue % loops.count]
    }

    /// Stops every loop.
    package func shutdown() async {
        for loop in loops { await loop.shutdown() }
    }
}
