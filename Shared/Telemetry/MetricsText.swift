/// Writes Prometheus's text exposition format (0.0.4): a family's `# HELP` and `# TYPE`
/// lines, then a line per series — `name{label="value",…} value` — with a histogram's
/// `_bucket{le=…}`, `_sum` and `_count` lines.
struct MetricsText {
    /// The text written so far.
    private(set) var output = ""

    /// Writes a family's help and type.
    mutating func header(name: String, type: MetricType, help: String) {
        output += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type.rawValue)\n"
    }

    /// Writes one series' line or lines.
    mutating func series(name: String, labels: MetricLabels, _ series: MetricsRegistry.Series) {
        switch series {
        case .counter(let counter, _, _): line(name, labels, String(counter.count))
        case .gauge(let gauge): line(name, labels, String(gauge.current))
        case .sampled(let read): line(name, labels, Self.format(read()))
        case .histogram(let histogram, _):
            let (cumulative, sum) = histogram.snapshot()
            let bounds = histogram.buckets.bounds
            for (index, count) in cumulative.enumerated() {
                let bound = index < bounds.count ? Self.format(Double(bounds[index]) * histogram.buckets.scale) : "+Inf"
                line(name + "_bucket", labels.adding("le", bound), String(count))
            }
            line(name + "_sum", labels, Self.format(Double(sum) * histogram.buckets.scale))
            line(name + "_count", labels, String(cumulative.last ?? 0))
        }
    }

    private mutating func line(_ name: String, _ labels: MetricLabels, _ value: String) {
        output += name
        if !labels.pairs.isEmpty {
            output += "{"
            for (index, pair) in labels.pairs.enumerated() {
                if index > 0 { output += "," }
                output += pair.name + "=\"" + Self.escapeLabelValue(pair.value) + "\""
            }
            output += "}"
        }
        output += " " + value + "\n"
    }

    /// A sample value: integers without a fraction, `NaN`, `+Inf`, `-Inf` as Prometheus spells them.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// A label value with `\`, `"` and line feeds escaped.
    static func escapeLabelValue(_ value: String) -> String {
        escape(value, quote: true)
    }

    /// Help text with `\` and line feeds escaped.
    static func escapeHelp(_ help: String) -> String {
        escape(help, quote: false)
    }

    /// `text` with `\`, line feeds and (when `quote`) `"` escaped, byte by byte: a line feed
    /// inside a character (`\r\n` is one) or a quote under a combining mark is escaped too.
    private static func escape(_ text: String, quote: Bool) -> String {
        func special(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "\\") || byte == 10 || (quote && byte == UInt8(ascii: "\"")) }
        guard text.utf8.contains(where: special) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            if special(byte) { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte == 10 ? UInt8(ascii: "n") : byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `name` is a valid metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    static func isValidMetricName(_ name: String) -> Bool {
        isName(name, allowingColon: true)
    }

    /// Whether `name` is a valid label name: `[a-zA-Z_][a-zA-Z0-9_]*`, not reserved (`__…`).
    static func isValidLabelName(_ name: String) -> Bool {
        isName(name, allowingColon: false) && !name.hasPrefix("__")
    }

    private static func isName(_ name: String, allowingColon: Bool) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"):
                true
            case UInt8(ascii: ":"): allowingColon
            default: false
            }
        }
    }
}
