#if canImport(Glibc)
internal import Glibc
#endif
internal import Dispatch
internal import Foundation
internal import Logging
internal import Synchronization
internal import SystemCalls

/// Where log lines go: a descriptor (standard error) written by a thread of its own, so no
/// caller — an event loop writing a call's line above all — ever waits on it.
///
/// A process's standard error is often a pipe (a container runtime's, a supervisor's): when
/// whatever reads it stalls, `write(2)` blocks, and a loop writing its calls' lines there would
/// stop serving every connection it holds. Here callers only append to a buffer; the writer
/// hands whole batches to the kernel, one `write(2)` for many lines under load. The buffer is
/// bounded: past ``limit`` bytes waiting, lines are dropped and counted, and once the reader
/// takes lines again a line of its own says how many were lost. Lines keep their order and
/// never interleave with each other (with another writer of the descriptor — the runtime's
/// crash report — a batch larger than the pipe's atomic size may). Pending lines are written
/// when the process exits (`atexit`); a crash (a trap, a fatal signal) loses what waited: at
/// most the last millisecond's lines while the descriptor keeps up.
///
/// Thread-safe.
final class LogSink: Sendable {
    /// Standard error, where every service logs; it writes the process's sampler's summaries.
    static let standardError = LogSink(fd: 2, sampler: .process)

    private struct State {
        /// Lines not yet taken by the writer.
        var pending: [UInt8] = []
        /// Lines dropped since the last report, because `pending` was full.
        var dropped = 0
        /// Whether the writer holds a batch it has not finished writing.
        var writing = false
        /// Whether the writer waits for a line (to be woken), rather than writing or lingering.
        var waiting = false
    }

    private let fd: Int32
    /// Whether `fd` was open when the sink was made; the sink never closes it.
    private let descriptorIsOpen: Bool
    /// Bytes that may wait for the writer; lines beyond are dropped.
    let limit: Int
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    /// The sampler whose summary of a second that left lines out the writer writes once the
    /// second is over, when no refused call comes to do it (``CallLineSampler/admit(_:label:second:)``).
    private let sampler: CallLineSampler?

    /// A sink writing to `fd` (which it does not close), with at most `limit` bytes waiting,
    /// and `sampler`'s due summaries.
    init(fd: Int32, limit: Int = 4 << 20, sampler: CallLineSampler? = nil) {
        self.fd = fd
        self.descriptorIsOpen = fcntl(fd, F_GETFD) != -1
        self.limit = limit
        self.sampler = sampler
        let thread = Thread { [self] in writeForever() }
        thread.name = "log-writer"
        thread.start()
        if fd == 2 { atexit { LogSink.standardError.flush(within: .seconds(2)) } }
    }

    /// Queues one line (its newline included); never blocks on the descriptor.
    func write(_ line: [UInt8]) {
        let wakeWriter = state.withLock { state -> Bool in
            if state.pending.count + line.count <= limit {
                state.pending.append(contentsOf: line)
            } else {
                state.dropped += 1  // reported by the writer, which a line longer than the limit must wake too
            }
            defer { state.waiting = false }
            return state.waiting
        }
        if wakeWriter { wake.signal() }
    }

    /// Waits until every queued line has been written, or `limit` has passed (a reader that
    /// takes nothing must not hold a process's exit forever). Returns whether all went out.
    @discardableResult
    func flush(within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        while true {
            let done = state.withLock { $0.pending.isEmpty && !$0.writing && $0.dropped == 0 }
            if done { return true }
            if ContinuousClock.now >= deadline { return false }
            usleep(1_000)
        }
    }

    /// How long the writer lets lines gather after writing a batch: under load a write(2) carries
    /// many lines, and callers never pay for waking the writer, which only waits — to be woken
    /// by the next line — once a pause finds nothing new.
    static let linger: UInt32 = 1_000  // µs

    /// The writer thread: takes whatever has queued up and writes it in one go, until the end.
    private func writeForever() {
        var batch: [UInt8] = []
        while true {
            let dropped = state.withLock { state -> Int? in
                state.writing = false
                guard !state.pending.isEmpty || state.dropped > 0 else {
                    state.waiting = true
                    return nil
                }
                swap(&batch, &state.pending)
                state.writing = true
                defer { state.dropped = 0 }
                return state.dropped
            }
            guard let dropped else {
                if let sampler {
                    // Woken at least once a second, for a summary a flood's end left due.
                    _ = wake.wait(timeout: .now() + .seconds(1))
                    if let summary = sampler.summary(before: sampler.currentSecond) { write(summary) }
                } else {
                    wake.wait()
                }
                continue
            }
            writeAll(batch)
            batch.removeAll(keepingCapacity: batch.capacity <= limit)
            if dropped > 0 {
                // After the batch: the lines were dropped once it had filled up.
                writeAll(LogLineHandler.line(
                    level: .warning, label: "log", message: "\(dropped) line(s) dropped: nothing took them for a while", metadata: [:]))
            }
            usleep(Self.linger)
        }
    }

    /// Writes every byte, however long the descriptor takes; gives up only if it is gone.
    private func writeAll(_ bytes: [UInt8]) {
        // A descriptor the process was started without (`2>&-`) is not a double close of ours:
        // it gets no write, which would be EBADF, a precondition failure in SystemCalls.
        guard descriptorIsOpen else { return }
        bytes.withUnsafeBytes { buffer in
            // Any error means the descriptor is gone; nothing sensible is left to do with the lines.
            try? System.writeAll(fd, buffer)
        }
    }
}
