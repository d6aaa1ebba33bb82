package import Foundation
import Synchronization

/// The standard error of a child process, collected line by line as it arrives.
///
/// A thread of its own drains the pipe (so a chatty child never blocks on a full pipe) and
/// appends complete lines in order. Thread-safe: the lines live behind a `Mutex`.
package final class ProcessLog: Sendable {
    /// What has been read so far, the bytes of an unfinished line, and whether the pipe closed.
    private struct State {
        var lines: [String] = []
        var partial = Data()
        var ended = false
    }

    private let state = Mutex(State())

    /// Starts draining `handle` on a thread named after `name`.
    package init(reading handle: FileHandle, name: String) {
        let thread = Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                append(chunk)
            }
            state.withLock { state in
                if !state.partial.isEmpty {
                    state.lines.append(String(decoding: state.partial, as: UTF8.self))
                    state.partial = Data()
                }
                state.ended = true
            }
        }
        thread.name = "\(name)-stderr"
        thread.start()
    }

    /// Every complete line read so far.
    package var lines: [String] { state.withLock { $0.lines } }

    /// Whether the child closed its end of the pipe.
    package var hasEnded: Bool { state.withLock { $0.ended } }

    /// The last `count` lines, joined, for failure messages.
    package func tail(_ count: Int = 30) -> String {
        lines.suffix(count).joined(separator: "\n")
    }

    /// The first value `match` extracts from a line, polling until `limit` passes or the pipe
    /// ends; nil when no line matched.
    package func first<Value>(within limit: Duration, _ match: (String) -> Value?) async -> Value? {
        let deadline = ContinuousClock.now + limit
        var checked = 0
        while true {
            let (lines, ended) = state.withLock { ($0.lines, $0.ended) }
            for line in lines[checked...] {
                if let value = match(line) { return value }
            }
            checked = lines.count
            if ended || ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    private func append(_ chunk: Data) {
        state.withLock { state in
            state.partial.append(chunk)
            while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
                let line = state.partial[state.partial.startIndex..<newline]
                state.lines.append(String(decoding: line, as: UTF8.self))
                state.partial = Data(state.partial[(newline + 1)...])
            }
        }
    }
}
