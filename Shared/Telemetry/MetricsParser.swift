/// One sample of a scraped page: a series' name, labels and value (and a timestamp, which
/// our processes never write but other exporters may).
public struct MetricSample: Sendable, Equatable {
    /// The sample's name: a family's name, or a histogram's `_bucket`, `_sum` or `_count`.
    public var name: String
    /// The labels, in the order written.
    public var labels: MetricLabels
    /// The value; `NaN` and `±Inf` as written.
    public var value: Double
    /// Milliseconds since the epoch, when the line gives one.
    public var timestamp: Int64?

    /// A sample with these parts.
    public init(name: String, labels: MetricLabels = [:], value: Double, timestamp: Int64? = nil) {
        self.name = name
        self.labels = labels
        self.value = value
        self.timestamp = timestamp
    }
}

extension MetricLabels {
    /// The value of the label named `name`, nil when there is none.
    public subscript(name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }
}

/// What a family's `# HELP` and `# TYPE` lines said.
public struct MetricFamilyDescription: Sendable, Equatable {
    /// The family's name.
    public var name: String
    /// `counter`, `gauge`, `histogram`, `summary` or `untyped` (also when no `# TYPE` line came).
    public var type: String = "untyped"
    /// Whether a `# TYPE` line came.
    public var typed = false
    /// The help text, unescaped; nil when no `# HELP` line came.
    public var help: String?
}

/// A page of Prometheus text exposition (version 0.0.4), parsed: every sample in order, and
/// the families' descriptions by name.
public struct ParsedMetrics: Sendable {
    /// The samples, in the order written.
    public var samples: [MetricSample] = []
    /// The families that had a `# HELP` or `# TYPE` line, by name.
    public var families: [String: MetricFamilyDescription] = [:]

    /// The samples named `name` (exactly: a histogram's buckets are `name_bucket`).
    public func samples(named name: String) -> [MetricSample] {
        samples.filter { $0.name == name }
    }
}

/// Why a page could not be parsed: the line (counted from 1) and what is wrong with it.
public struct MetricsParseError: Error, Equatable, CustomStringConvertible {
    /// The line's number, from 1.
    public let line: Int
    /// What is wrong.
    public let reason: String

    /// `line 3: …`.
    public var description: String { "line \(line): \(reason)" }
}

/// Parses Prometheus's text exposition format, version 0.0.4
/// ([the format](https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format)):
/// `# HELP` and `# TYPE` lines, other comments and blank lines skipped, then samples —
/// `name{label="value",…} value [timestamp]` — with `\\`, `\"` and `\n` escaped in label
/// values, and `NaN`, `+Inf`, `-Inf` as values. The first malformed line ends the parse with
/// an error naming it. Stateless.
public enum MetricsParser {
    /// The samples and family descriptions of `text`.
    public static func parse(_ text: String) throws(MetricsParseError) -> ParsedMetrics {
        var state = State()
        // Lines end at the byte 10 alone (a `\r\n` is one Character, but not one line end here).
        for (index, line) in text.utf8.split(separator: 10, omittingEmptySubsequences: false).enumerated() {
            do throws(LineError) {
                try parseLine(Array(line), into: &state)
            } catch {
                throw MetricsParseError(line: index + 1, reason: error.reason)
            }
        }
        return state.parsed
    }

    /// What the lines so far said, and the names that have had samples (a `# TYPE` must come
    /// before its family's first).
    private struct State {
        var parsed = ParsedMetrics()
        var sampledNames: Set<String> = []
    }

    /// What is wrong with one line; ``parse(_:)`` adds its number.
    struct LineError: Error {
        let reason: String
    }

    /// Parses one line, adding what it says to `parsed`.
    private static func parseLine(_ bytes: [UInt8], into state: inout State) throws(LineError) {
        var scanner = LineScanner(bytes: bytes)
        scanner.skipBlanks()
        guard let first = scanner.peek else { return }  // blank line
        if first == UInt8(ascii: "#") {
            scanner.advance()
            try parseComment(&scanner, into: &state)
        } else {
            let sample = try parseSample(&scanner)
            state.sampledNames.insert(sample.name)
            state.parsed.samples.append(sample)
        }
    }

    /// A `# HELP` or `# TYPE` line; any other comment is skipped.
    private static func parseComment(_ scanner: inout LineScanner, into state: inout State) throws(LineError) {
        scanner.skipBlanks()
        let keyword = scanner.token()
        guard keyword == "HELP" || keyword == "TYPE" else { return }
        scanner.skipBlanks()
        let name = scanner.name(allowingColon: true)
        guard !name.isEmpty else { throw LineError(reason: "# \(keyword) without a metric name") }
        var family = state.parsed.families[name] ?? MetricFamilyDescription(name: name)
        if keyword == "HELP" {
            guard family.help == nil else { throw LineError(reason: "second # HELP for \(name)") }
            scanner.skipBlanks()
            family.help = scanner.restUnescaped()
        } else {
            guard !family.typed else { throw LineError(reason: "second # TYPE for \(name)") }
            scanner.skipBlanks()
            let type = scanner.token()
            guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(type) else {
                throw LineError(reason: "unknown type '\(type)' for \(name)")
            }
            let sampleNames = type == "histogram" || type == "summary" ? [name] + sampleSuffixes.map { name + $0 } : [name]
            guard !sampleNames.contains(where: state.sampledNames.contains) else {
                throw LineError(reason: "# TYPE for \(name) after its samples")
            }
            guard scanner.atEndAfterBlanks else { throw LineError(reason: "text after the type of \(name)") }
            family.type = type
            family.typed = true
        }
        state.parsed.families[name] = family
    }

    /// `name{labels} value [timestamp]`.
    private static func parseSample(_ scanner: inout LineScanner) throws(LineError) -> MetricSample {
        let name = scanner.name(allowingColon: true)
        guard !name.isEmpty else { throw LineError(reason: "expected a metric name, found '\(scanner.remainder.prefix(20))'") }
        scanner.skipBlanks()
        var labels: MetricLabels = [:]
        if scanner.peek == UInt8(ascii: "{") {
            scanner.advance()
            labels = try parseLabels(&scanner, of: name)
        }
        scanner.skipBlanks()
        let valueText = scanner.token()
        guard let value = parseValue(valueText) else {
            throw LineError(reason: valueText.isEmpty ? "\(name) has no value" : "bad value '\(valueText)' for \(name)")
        }
        scanner.skipBlanks()
        var timestamp: Int64?
        if !scanner.atEnd {
            let text = scanner.token()
            guard let milliseconds = Int64(text) else { throw LineError(reason: "bad timestamp '\(text)' for \(name)") }
            timestamp = milliseconds
        }
        guard scanner.atEndAfterBlanks else { throw LineError(reason: "text after the sample of \(name)") }
        return MetricSample(name: name, labels: labels, value: value, timestamp: timestamp)
    }

    /// `label="value",…}` after the opening brace; a trailing comma is allowed.
    private static func parseLabels(_ scanner: inout LineScanner, of metric: String) throws(LineError) -> MetricLabels {
        var pairs: [(String, String)] = []
        while true {
            scanner.skipBlanks()
            if scanner.peek == UInt8(ascii: "}") {
                scanner.advance()
                return MetricLabels(pairs)
            }
            let label = scanner.name(allowingColon: false)
            guard !label.isEmpty, !label.hasPrefix("__") else {
                throw LineError(reason: "bad label name in \(metric) at '\(scanner.remainder.prefix(20))'")
            }
            guard !pairs.contains(where: { $0.0 == label }) else { throw LineError(reason: "label \(label) twice in \(metric)") }
            scanner.skipBlanks()
            guard scanner.consume(UInt8(ascii: "=")) else { throw LineError(reason: "expected '=' after label \(label) of \(metric)") }
            scanner.skipBlanks()
            guard scanner.consume(UInt8(ascii: "\"")) else { throw LineError(reason: "label \(label) of \(metric) has no quoted value") }
            pairs.append((label, try scanner.quoted()))
            scanner.skipBlanks()
            if !scanner.consume(UInt8(ascii: ",")) && scanner.peek != UInt8(ascii: "}") {
                throw LineError(reason: "expected ',' or '}' after label \(label) of \(metric)")
            }
        }
    }

    /// A sample value as Go's `ParseFloat`, which Prometheus uses, reads it (like `strtod`):
    /// decimal or exponent notation, `NaN`, `Inf` with an optional sign, in any case.
    static func parseValue(_ text: String) -> Double? {
        Double(text)
    }

    /// What a histogram's or summary's sample names add to the family's name.
    static let sampleSuffixes = ["_bucket", "_sum", "_count"]
}

/// A cursor over one line's bytes for ``MetricsParser``.
struct LineScanner {
    /// The line.
    let bytes: [UInt8]
    /// The next byte's index.
    private(set) var index = 0

    /// A scanner at the start of `bytes`.
    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The next byte, nil at the end.
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }
    /// Whether the line is used up.
    var atEnd: Bool { index >= bytes.count }
    /// Whether only blanks are left.
    var atEndAfterBlanks: Bool { bytes[index...].allSatisfy(Self.isBlank) }
    /// The rest of the line, for messages.
    var remainder: String { String(decoding: bytes[index...], as: UTF8.self) }

    /// Moves past one byte.
    mutating func advance() { index += 1 }

    /// Moves past `byte` if it is next; whether it was.
    mutating func consume(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    /// Moves past spaces and tabs.
    mutating func skipBlanks() {
        while let byte = peek, Self.isBlank(byte) { index += 1 }
    }

    /// The bytes up to the next blank or the end.
    mutating func token() -> String {
        let start = index
        while let byte = peek, !Self.isBlank(byte) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// A metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`) or, without colons, a label name; empty when
    /// none starts here.
    mutating func name(allowingColon: Bool) -> String {
        let start = index
        while let byte = peek {
            let isLetter = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            let isDigit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            guard isLetter || byte == UInt8(ascii: "_") || (allowingColon && byte == UInt8(ascii: ":")) || (isDigit && index > start) else {
                break
            }
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// A label value after its opening quote, up to the closing one, with `\\`, `\"` and `\n`
    /// unescaped (any other escaped character stands for itself, as Prometheus reads it).
    mutating func quoted() throws(MetricsParser.LineError) -> String {
        var value: [UInt8] = []
        while let byte = peek {
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: value, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = peek else { break }
                index += 1
                value.append(escaped == UInt8(ascii: "n") ? 10 : escaped)
            default: value.append(byte)
            }
        }
        throw MetricsParser.LineError(reason: "label value without its closing quote")
    }

    /// The rest of the line with `\\` and `\n` unescaped, as in help text.
    mutating func restUnescaped() -> String {
        var value: [UInt8] = []
        while let byte = peek {
            index += 1
            if byte == UInt8(ascii: "\\"), let escaped = peek, escaped == UInt8(ascii: "\\") || escaped == UInt8(ascii: "n") {
                index += 1
                value.append(escaped == UInt8(ascii: "n") ? 10 : escaped)
            } else {
                value.append(byte)
            }
        }
        return String(decoding: value, as: UTF8.self)
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
}
