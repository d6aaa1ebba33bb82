import Foundation
import Synchronization

/// The standard error of one child process, split into lines as it arrives.
///
/// A thread of its own drains the pipe, so a chatty service never blocks on a full pipe.
/// Thread-safe: the lines live behind a `Mutex`.
final class StandardErrorLog: Sendable {
    /// The complete lines read so far, the unfinished last one, and whether the pipe closed.
    private struct Buffer {
        var lines: [String] = []
        var partial = Data()
        var closed = false
    }

    private let buffer = Mutex(Buffer())

    /// Starts draining `pipe`; `name` labels the thread.
    init(draining pipe: Pipe, name: String) {
        let handle = pipe.fileHandleForReading
        let thread = Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                append(chunk)
            }
            buffer.withLock { buffer in
                if !buffer.partial.isEmpty {
                    buffer.lines.append(String(decoding: buffer.partial, as: UTF8.self))
                    buffer.partial = Data()
                }
                buffer.closed = true
            }
        }
        thread.name = "\(name)-stderr"
        thread.start()
    }

    /// Every complete line so far.
    var lines: [String] { buffer.withLock { $0.lines } }

    /// The last `count` lines, joined, for failure reports.
    func tail(_ count: Int = 40) -> String {
        lines.suffix(count).joined(separator: "\n")
    }

    /// The first value `match` finds in a line, waiting until `limit` passes or the pipe
    /// closes; nil when no line matched.
    func first<Value>(within limit: Duration, _ match: (String) -> Value?) async -> Value? {
        let deadline = ContinuousClock.now + limit
        var checked = 0
        while true {
            let (lines, closed) = buffer.withLock { ($0.lines, $0.closed) }
            for line in lines[checked...] {
                if let value = match(line) { return value }
            }
            checked = lines.count
            if closed || ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    private func append(_ chunk: Data) {
        buffer.withLock { buffer in
            buffer.partial.append(chunk)
            while let newline = buffer.partial.firstIndex(of: UInt8(ascii: "\n")) {
                buffer.lines.append(String(decoding: buffer.partial[buffer.partial.startIndex..<newline], as: UTF8.self))
                buffer.partial = Data(buffer.partial[(newline + 1)...])
            }
        }
    }
}
