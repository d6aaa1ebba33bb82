#if canImport(Glibc)
internal import Glibc
#endif
public import Logging
internal import Synchronization

/// A swift-log handler that writes one line per event to standard error:
/// `2026-11-22T00:55:38.123Z info auth-svc: call method=/… request-id=… status=OK`.
///
/// Built for the per-call log line: UTC timestamps formatted without the C library's time-zone
/// machinery (which re-reads the zone on every call), metadata keys sorted for stable lines,
/// and each line handed to the kernel in one `write(2)`, so lines from concurrent calls never
/// interleave. Thread-safe: a value type; the only shared state is the per-second timestamp
/// cache behind a Mutex.
public struct LogLineHandler: LogHandler {
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
        let line = Self.line(level: event.level, label: label, message: event.message.description, metadata: merged)
        var offset = 0
        while offset < line.count {
            let written = line.withUnsafeBytes { Glibc.write(2, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return  // standard error is gone; nothing sensible is left to do with the line
            }
            offset += written
        }
    }

    /// One formatted line, newline included: timestamp, level, label, message, then the
    /// metadata as `key=value` in key order.
    static func line(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        Timestamp.append(to: &line)
        line.append(0x20)
        line.append(contentsOf: level.rawValue.utf8)
        line.append(0x20)
        line.append(contentsOf: label.utf8)
        line.append(contentsOf: ": ".utf8)
        line.append(contentsOf: message.utf8)
        for key in metadata.keys.sorted() {
            line.append(0x20)
            line.append(contentsOf: key.utf8)
            line.append(0x3D)
            appendValue(metadata[key]?.description ?? "", to: &line)
        }
        line.append(0x0A)
        return line
    }

    /// Appends a value, quoted when it has spaces, quotes, `=` or line breaks, so a line
    /// stays machine-readable.
    static func appendValue(_ value: String, to line: inout [UInt8]) {
        let bytes = value.utf8
        let needsQuotes = bytes.isEmpty || bytes.contains { $0 == 0x20 || $0 == 0x22 || $0 == 0x3D || $0 == 0x0A || $0 == 0x5C }
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
