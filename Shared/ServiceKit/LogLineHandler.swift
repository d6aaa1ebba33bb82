public import Logging
public import RPC
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
    ///
    /// The line of a refused call (``CallLogLine/refusal``) goes through the process's
    /// ``CallLineSampler``: past its lines for the second it is only counted.
    public func logCall(_ call: CallLogLine, level: Logger.Level) {
        if let refusal = call.refusal {
            let sampler = CallLineSampler.process
            let (write, summary) = sampler.admit(refusal, label: label, second: sampler.currentSecond)
            if let summary { LogSink.standardError.write(summary) }
            guard write else { return }
        }
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
        appendText(message, to: &line)
        return line
    }

    /// The most bytes a message or a metadata value takes in a line, quotes and escapes
    /// included: any of them may quote what a client sent (a path, an id, an error that echoes
    /// input), and none may make a line long.
    public static let maxFieldBytes = CallLogLine.maxFieldBytes

    /// Appends a message: unquoted, control characters escaped (a line break in a message must
    /// not start a line of its own), cut to ``maxFieldBytes`` like a value.
    static func appendText(_ text: String, to line: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            var plain = bytes.count <= maxFieldBytes
            if plain { for byte in bytes where byte < 0x20 || byte == 0x7F { plain = false; break } }
            if plain { return line.append(contentsOf: bytes) }
            appendEscaped(bytes, quoted: false, to: &line)
        }
    }

    /// ` key=value`.
    private static func appendField(_ key: String, _ value: String, to line: inout [UInt8]) {
        line.append(0x20)
        line.append(contentsOf: key.utf8)
        line.append(0x3D)
        appendValue(value, to: &line)
    }

    /// Appends a value, quoted when it has spaces, quotes, `=`, backslashes or control
    /// characters (escaped: `\"`, `\\`, `\n`, `\r`, `\t`, `\xNN`), so a line stays
    /// machine-readable; one written longer than ``maxFieldBytes`` is cut to it, with a mark
    /// giving its whole length (``CallLogLine/truncationMark(length:)``).
    static func appendValue(_ value: String, to line: inout [UInt8]) {
        var value = value
        // Over the contiguous UTF-8 (a native string's own storage): a scan of raw bytes, not
        // of the generic UTF-8 view, on every value of every call's line.
        value.withUTF8 { bytes in
            var needsQuotes = bytes.isEmpty
            for byte in bytes where byte <= 0x20 || byte == 0x22 || byte == 0x3D || byte == 0x5C || byte == 0x7F {
                needsQuotes = true
                break
            }
            guard needsQuotes || bytes.count > maxFieldBytes else {
                line.append(contentsOf: bytes)
                return
            }
            appendEscaped(bytes, quoted: needsQuotes, to: &line)
        }
    }

    /// How many bytes `byte` takes once escaped.
    private static func escapedWidth(_ byte: UInt8, quoted: Bool) -> Int {
        switch byte {
        case 0x22, 0x5C: quoted ? 2 : 1
        case 0x0A, 0x0D, 0x09: 2
        case 0..<0x20, 0x7F: 4
        default: 1
        }
    }

    /// Appends `bytes` escaped — in quotes when `quoted` (a value), where `"` and `\` are
    /// escaped too — and, when that would take more than ``maxFieldBytes``, only as many whole
    /// characters as fit before the truncation mark.
    private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, quoted: Bool, to line: inout [UInt8]) {
        let frame = quoted ? 2 : 0
        var end = bytes.count
        var width = frame
        for byte in bytes { width += escapedWidth(byte, quoted: quoted) }
        var mark: String.UTF8View? = nil
        if width > maxFieldBytes {
            let cut = CallLogLine.truncationMark(length: bytes.count).utf8
            let budget = maxFieldBytes - frame - cut.count
            width = 0
            end = 0
            while end < bytes.count, width + escapedWidth(bytes[end], quoted: quoted) <= budget {
                width += escapedWidth(bytes[end], quoted: quoted)
                end += 1
            }
            // Back to the start of a character: a UTF-8 continuation byte is 0b10xxxxxx.
            while end > 0, end < bytes.count, bytes[end] & 0xC0 == 0x80 { end -= 1 }
            mark = cut
        }
        if quoted { line.append(0x22) }
        for byte in bytes[..<end] {
            switch byte {
            case 0x22 where quoted: line.append(contentsOf: [0x5C, 0x22])
            case 0x5C where quoted: line.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: line.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: line.append(contentsOf: [0x5C, 0x72])
            case 0x09: line.append(contentsOf: [0x5C, 0x74])
            case 0..<0x20, 0x7F:
                let digits: StaticString = "0123456789abcdef"
                line.append(contentsOf: [0x5C, 0x78, digits.utf8Start[Int(byte >> 4)], digits.utf8Start[Int(byte & 0xF)]])
            default: line.append(byte)
            }
        }
        if let mark { line.append(contentsOf: mark) }
        if quoted { line.append(0x22) }
    }
}
