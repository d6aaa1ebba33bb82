import Foundation
import Synchronization

/// The standard error of one child process, split into lines as it arrives.
///
/// A dedicated thread reads the pipe until end-of-file, so a talkative child never stalls on
/// a full pipe. Thread-safe: everything read lives behind a `Mutex`.
final class StandardErrorLines: Sendable {
    /// The lines read so far, the bytes of an unfinished line, and whether the pipe closed.
    private struct Buffer {
        var lines: [String] = []
        var pending: [UInt8] = []
        var closed = false
    }

    private let buffer = Mutex(Buffer())

    /// Starts reading `handle` on a thread named after `processName`.
    init(reading handle: FileHandle, processName: String) {
        let reader = Thread { [self] in
            while case let chunk = handle.availableData, !chunk.isEmpty {
                receive(chunk)
            }
            buffer.withLock { buffer in
                if !buffer.pending.isEmpty { buffer.lines.append(String(decoding: buffer.pending, as: UTF8.self)) }
                buffer.pending.removeAll()
                buffer.closed = true
            }
        }
        reader.name = "\(processName) stderr"
        reader.start()
    }

    /// Every complete line so far.
    var lines: [String] { buffer.withLock { $0.lines } }

    /// The last `count` lines as one text, for failure reports.
    func tail(_ count: Int = 40) -> String {
        lines.suffix(count).joined(separator: "\n")
    }

    /// The first non-nil result of `extract` over the lines, waiting for new ones until
    /// `limit` passes or the pipe closes.
    func first<Value>(within limit: Duration, _ extract: (String) -> Value?) async -> Value? {
        let deadline = ContinuousClock.now + limit
        var seen = 0
        while true {
            let (lines, closed) = buffer.withLock { ($0.lines, $0.closed) }
            for line in lines.dropFirst(seen) {
                if let value = extract(line) { return value }
            }
            seen = lines.count
            if closed || ContinuousClock.now > deadline { return nil }
            try? await Task.sleep(for: .milliseconds(25))
        }
    }

    private func receive(_ chunk: Data) {
        buffer.withLock { buffer in
            for byte in chunk {
                if byte == UInt8(ascii: "\n") {
                    buffer.lines.append(String(decoding: buffer.pending, as: UTF8.self))
                    buffer.pending.removeAll(keepingCapacity: true)
                } else {
                    buffer.pending.append(byte)
                }
            }
        }
    }
}
