import Logging
import Synchronization

/// A log handler that keeps the per-call lines ("call") of every level, with all their
/// metadata as text.
final class CapturedLogLines: LogHandler, @unchecked Sendable {
    // Invariant for @unchecked Sendable: `captured` is behind a Mutex; the LogHandler
    // properties are set once, before the logger is shared.
    private let captured = Mutex<[(level: Logger.Level, fields: [String: String])]>([])
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.message == "call" else { return }
        var fields: [String: String] = [:]
        for (key, value) in event.metadata ?? [:] {
            if case .string(let text) = value { fields[key] = text } else { fields[key] = "\(value)" }
        }
        captured.withLock { $0.append((event.level, fields)) }
    }

    /// The call lines so far, in order.
    var calls: [(level: Logger.Level, fields: [String: String])] { captured.withLock { $0 } }

    /// A logger writing here, at every level.
    var logger: Logger {
        var logger = Logger(label: "captured-log-lines") { _ in self }
        logger.logLevel = .trace
        return logger
    }
}
