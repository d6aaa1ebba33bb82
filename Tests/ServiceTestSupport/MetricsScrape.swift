import Foundation
package import Telemetry

/// One scrape of a process's `/metrics`, fetched with curl over HTTP/1.1 or HTTP/2 (prior
/// knowledge): what a Prometheus server reads. Sample lookups match a series' exact text.
package struct MetricsScrape: Sendable {
    /// The HTTP status.
    package let status: Int
    /// The `content-type` header, when sent.
    package let contentType: String?
    /// The body.
    package let text: String

    /// Fetches `http://127.0.0.1:port/metrics` over HTTP/2 when `http2`, else HTTP/1.1.
    package static func fetch(port: Int, http2: Bool = false, path: String = "/metrics") async throws -> MetricsScrape {
        let version = http2 ? "--http2-prior-knowledge" : "--http1.1"
        let result = try await Command.run(
            "curl", ["-s", "-i", version, "--max-time", "10", "http://127.0.0.1:\(port)\(path)"], timeout: .seconds(15))
        let output = result.output.replacingOccurrences(of: "\r\n", with: "\n")
        guard let split = output.range(of: "\n\n") else { return MetricsScrape(status: 0, contentType: nil, text: output) }
        let head = output[..<split.lowerBound].split(separator: "\n")
        let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        let contentType = head.dropFirst().first { $0.lowercased().hasPrefix("content-type:") }
            .map { $0.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces) }
        return MetricsScrape(status: status, contentType: contentType, text: String(output[split.upperBound...]))
    }

    /// The value of the series written exactly `series` (`name{label="value",…}` in the
    /// order the process writes labels), nil when it is not there.
    package func value(_ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// The series of metric `name` (its lines, without `#` comments).
    package func lines(of name: String) -> [Substring] {
        text.split(separator: "\n").filter { $0.hasPrefix(name + "{") || $0.hasPrefix(name + " ") }
    }
}

extension MetricsScrape {
    /// The exposition `text` as a registry wrote it, read without HTTP (a service built in the
    /// test process). An extension's initializer keeps the memberwise one.
    package init(exposition text: String) {
        self.init(status: 200, contentType: nil, text: text)
    }
}

extension MetricsRegistry {
    /// The value of the series written exactly `series` (`name{label="value",…}` in the order
    /// the labels are written) in the registry's exposition now, nil when absent.
    package func value(_ series: String) -> Double? {
        MetricsScrape(exposition: exposition()).value(series)
    }
}
