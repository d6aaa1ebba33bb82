import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Interrupts a blocked system call on another thread: `SIGUSR2`, handled by a no-op handler
/// installed without `SA_RESTART`, so a call the signal lands in fails with `EINTR` (or, for a
/// write that has moved some bytes, returns short) instead of being restarted by the kernel.
/// Nothing else in the test process uses `SIGUSR2`.
enum Interrupter {
    /// Installs the handler, once per process.
    static let installed: Void = {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0  // no SA_RESTART
        precondition(sigaction(SIGUSR2, &action, nil) == 0, "cannot install the SIGUSR2 handler")
    }()

    /// Sends the signal to `thread` every few milliseconds until `done` holds or 10 s pass.
    static func interrupt(_ thread: pthread_t, until done: @Sendable () -> Bool) async throws {
        _ = installed
        let deadline = ContinuousClock.now + .seconds(10)
        while !done(), ContinuousClock.now < deadline {
            pthread_kill(thread, SIGUSR2)
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}

/// A thread of its own for blocking work, so a test waits for it without holding a thread of
/// the cooperative pool; `started` gets the thread's id first (to signal it).
final class BlockingThread<Value: Sendable>: Sendable {
    /// The thread's id once it runs.
    private let id = Mutex<pthread_t?>(nil)
    /// What the body returned, once it has.
    private let value = Mutex<Value?>(nil)

    /// Starts `body` on a new thread.
    init(_ body: @escaping @Sendable () -> Value) {
        _ = Interrupter.installed
        Thread { [self] in
            // A thread inherits its creator's signal mask, and libdispatch's workers (which run
            // the tests) block signals.
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGUSR2)
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
            id.withLock { $0 = pthread_self() }
            let result = body()
            value.withLock { $0 = result }
        }.start()
    }

    /// Whether the body has returned.
    var isFinished: Bool { value.withLock { $0 != nil } }

    /// The thread's id, waiting (off the pool's threads) until it has one.
    func threadID() async throws -> pthread_t {
        while true {
            if let id = id.withLock({ $0 }) { return id }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// The body's result, waiting at most 20 s.
    func result() async throws -> Value {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let value = value.withLock({ $0 }) { return value }
            try await Task.sleep(for: .milliseconds(2))
        }
        Issue.record("the thread did not finish within 20 s")
        throw CancellationError()
    }
}
