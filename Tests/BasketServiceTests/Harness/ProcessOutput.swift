import Foundation
import Synchronization

/// The standard error of a child process, split into lines as it arrives.
///
/// The pipe is drained by the file handle's readability handler (on a Dispatch queue), so a
/// chatty child never blocks on a full pipe. Thread-safe: the lines live behind a `Mutex`.
final class ProcessOutput: Sendable {
    private struct Buffer {
        var lines: [String] = []
        var pending = Data()
        var closed = false
    }

    private let buffer = Mutex(Buffer())

    /// Starts collecting what `pipe` delivers.
    init(draining pipe: Pipe) {
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            guard let self else { return }
            if chunk.isEmpty {
                handle.readabilityHandler = nil
                self.close()
            } else {
                self.take(chunk)
            }
        }
    }

    /// Every complete line so far.
    var lines: [String] { buffer.withLock { $0.lines } }

    /// The last `count` lines, joined, for failure reports.
    func tail(_ count: Int = 25) -> String { lines.suffix(count).joined(separator: "\n") }

    /// The first non-nil result of `extract` over the lines, waiting for more lines until
    /// `limit` passes or the pipe closes.
    func first<Value>(within limit: Duration, _ extract: (String) -> Value?) async -> Value? {
        let deadline = ContinuousClock.now + limit
        var seen = 0
        while true {
            let (lines, closed) = buffer.withLock { ($0.lines, $0.closed) }
            for line in lines[seen...] {
                if let value = extract(line) { return value }
            }
            seen = lines.count
            if closed || ContinuousClock.now > deadline { return nil }
            try? await Task.sleep(for: .milliseconds(25))
        }
    }

    private func take(_ chunk: Data) {
        buffer.withLock { buffer in
            buffer.pending.append(chunk)
            var start = buffer.pending.startIndex
            while let newline = buffer.pending[start...].firstIndex(of: 0x0A) {
                buffer.lines.append(String(decoding: buffer.pending[start..<newline], as: UTF8.self))
                start = buffer.pending.index(after: newline)
            }
            buffer.pending = Data(buffer.pending[start...])
        }
    }

    private func close() {
        buffer.withLock { buffer in
            if !buffer.pending.isEmpty { buffer.lines.append(String(decoding: buffer.pending, as: UTF8.self)) }
            buffer.pending = Data()
            buffer.closed = true
        }
    }
}
