public import Logging
public import RPCHTTP2
internal import Synchronization

/// A swift-log handler that writes one line per event to standard error:
/// `2026-11-22T00:55:38.123Z info auth-svc: call method=/… request-id=… status=OK`.
///
/// Built for the per-call log line: UTC timestamps formatted without the C library's time-zone
/// machinery (which re-reads the zone on every call), metadata keys sorted for stable lines,
/// and each line queued whole to ``LogSink/standardError``, whose thread writes it: lines from
/// concurrent calls never interleave, and no caller waits on standard error. Thread-safe: a
/// value type; the shared state is the per-second timestamp cache and the sink's queue.
public struct LogLineHandler: LogHandler, CallLineLogging {
    /// The logger's label, printed on each line.
    public let label: String
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]

    /// A handler for `label` at `level`.
    public init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged: Logger.Metadata
        if let extra = event.metadata, !extra.isEmpty {
            merged = metadata.isEmpty ? extra : metadata.merging(extra) { _, new in new }
        } else {
            merged = metadata
        }
        LogSink.standardError.write(Self.line(level: event.level, label: label, message: event.message.description, metadata: merged))
    }

    /// A call's line, written from its fields as ``line(level:label:message:metadata:)`` would
    /// write their metadata — unless the handler has metadata of its own to merge in.
    public func logCall(_ call: CallLogLine, level: Logger.Level) {
        guard metadata.isEmpty else {
            return log(event: LogEvent(
                level: level, message: CallLogLine.message, metadata: call.metadata, source: "RPCHTTP2", file: #fileID,
                function: #function, line: #line))
        }
        LogSink.standardError.write(Self.callLine(call, level: level, label: label))
    }

    /// ``logCall(_:level:)``'s line, newline included.
    static func callLine(_ call: CallLogLine, level: Logger.Level, label: String) -> [UInt8] {
        var line = start(level: level, label: label, message: CallLogLine.message.description)
        call.forEachField { name, value in appendField(name, value, to: &line) }
        line.append(0x0A)
        return line
    }

    /// One formatted line, newline included: timestamp, level, label, message, then the
    /// metadata as `key=value` in key order.
    static func line(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> [UInt8] {
        var line = start(level: level, label: label, message: message)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { appendField(key, value.description, to: &line) }
        line.append(0x0A)
        return line
    }

    /// A line up to its metadata: timestamp, level, label, message.
    private static func start(level: Logger.Level, label: String, message: String) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        Timestamp.append(to: &line)
        line.append(0x20)
        line.append(contentsOf: level.rawValue.utf8)
        line.append(0x20)
        line.append(contentsOf: label.utf8)
        line.append(contentsOf: ": ".utf8)
        line.append(contentsOf: message.utf8)
        return line
    }

    /// ` key=value`.
    private static func appendField(_ key: String, _ value: String, to line: inout [UInt8]) {
        line.append(0x20)
        line.append(contentsOf: key.utf8)
        line.append(0x3D)
        appendValue(value, to: &line)
    }

    /// Appends a value, quoted when it has spaces, quotes, `=` or line breaks, so a line
    /// stays machine-readable.
    static func appendValue(_ value: String, to line: inout [UInt8]) {
        var value = value
        // Over the contiguous UTF-8 (a native string's own storage): a scan of raw bytes, not
        // of the generic UTF-8 view, on every value of every call's line.
        value.withUTF8 { bytes in
            var needsQuotes = bytes.isEmpty
            for byte in bytes where byte == 0x20 || byte == 0x22 || byte == 0x3D || byte == 0x0A || byte == 0x5C {
                needsQuotes = true
                break
            }
            guard needsQuotes else {
                line.append(contentsOf: bytes)
                return
            }
            line.append(0x22)
            for byte in bytes {
                switch byte {
                case 0x22: line.append(contentsOf: [0x5C, 0x22])
                case 0x5C: line.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: line.append(contentsOf: [0x5C, 0x6E])
                default: line.append(byte)
                }
            }
            line.append(0x22)
        }
    }
}
