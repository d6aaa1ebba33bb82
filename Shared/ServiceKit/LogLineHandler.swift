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

/// ISO 8601 UTC timestamps with milliseconds, the seconds part formatted once per second.
enum Timestamp {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))

    /// Appends the current time, e.g. `2026-11-22T00:55:38.123Z`.
    static func append(to line: inout [UInt8]) {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let second = Int(spec.tv_sec)
        let millis = Int(spec.tv_nsec) / 1_000_000
        let prefix = cache.withLock { cache -> String in
            if cache.second != second { cache = (second, format(second)) }
            return cache.text
        }
        line.append(contentsOf: prefix.utf8)
        line.append(contentsOf: [0x2E, UInt8(48 + millis / 100), UInt8(48 + millis / 10 % 10), UInt8(48 + millis % 10), 0x5A])
    }

    /// The current time as text.
    static func now() -> String {
        var line: [UInt8] = []
        append(to: &line)
        return String(decoding: line, as: UTF8.self)
    }

    /// `YYYY-MM-DDTHH:MM:SS` for seconds since 1970 in UTC (civil-from-days arithmetic).
    static func format(_ seconds: Int) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Howard Hinnant's days-to-civil algorithm, in whole numbers.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
    }
}
