import Foundation
import Synchronization

/// The standard error of a child process, collected line by line as it arrives.
///
/// A background thread drains the pipe (so a chatty child never blocks on a full pipe) and
/// appends complete lines in order. Thread-safe: the lines live behind a `Mutex`.
final class ProcessLog: Sendable {
    /// What has been read so far, and whether the pipe reached end-of-file.
    private struct State {
        var lines: [String] = []
        var partial = Data()
        var ended = false
    }

    private let state = Mutex(State())

    /// Starts draining `handle` on a thread of its own.
    init(reading handle: FileHandle) {
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
        thread.name = "auth-svc-stderr"
        thread.start()
    }

    /// Every complete line read so far.
    var lines: [String] { state.withLock { $0.lines } }

    /// Whether the child closed its end of the pipe.
    var hasEnded: Bool { state.withLock { $0.ended } }

    /// The last `count` lines, joined, for failure messages.
    func tail(_ count: Int = 30) -> String {
        lines.suffix(count).joined(separator: "\n")
    }

    /// The first value `match` extracts from a line, polling until `limit` passes or the pipe
    /// ends; nil when no line matched.
    func firstMatch<Value>(within limit: Duration, _ match: (String) -> Value?) async -> Value? {
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
