import Foundation
import ServiceTestSupport
import Testing

extension MetricsScrape {
    /// The content type Prometheus's text format 0.0.4 is served with.
    static let textFormat = "text/plain; version=0.0.4; charset=utf-8"

    /// The families the page declares (`# TYPE name kind`).
    var families: Set<String> {
        Set(text.split(separator: "\n").compactMap { line in
            line.hasPrefix("# TYPE ") ? line.split(separator: " ").dropFirst(2).first.map(String.init) : nil
        })
    }

    /// The series of `name` whose labels include every one of `labels`, whatever their order.
    func lines(of name: String, labeled labels: [String: String]) -> [Substring] {
        lines(of: name).filter { line in labels.allSatisfy { line.contains("\($0.key)=\"\($0.value)\"") } }
    }
}

/// Debian's `promtool`, Prometheus's own checker.
enum Promtool {
    /// `promtool check metrics` of `exposition` (given on its standard input): the format
    /// parses and follows Prometheus's naming and help-text rules (status 0), else 1 or 3
    /// with the problems.
    static func checkMetrics(_ exposition: String) async throws -> Command.Result {
        try await withInputFile(exposition) { file in
            try await Command.run("sh", ["-c", #"exec promtool check metrics < "$1""#, "sh", file.path], timeout: .seconds(60))
        }
    }

    /// `promtool check config` of the configuration at `path`.
    static func checkConfig(_ path: String) async throws -> Command.Result {
        try await Command.run("promtool", ["check", "config", path], timeout: .seconds(60))
    }

    /// `promtool check rules` of recording rules computing `expressions`: each parses as PromQL.
    static func checkExpressions(_ expressions: [String]) async throws -> Command.Result {
        // JSON is YAML: every expression as a JSON string, escaped as JSON escapes it (but for
        // "\/", which JSON allows and YAML does not).
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let rules = try expressions.enumerated().map { index, expression in
            let quoted = try #require(String(data: try encoder.encode(expression), encoding: .utf8))
            return #"{"record": "dashboard_query_\#(index)", "expr": \#(quoted)}"#
        }
        let file = #"{"groups": [{"name": "dashboard", "rules": [\#(rules.joined(separator: ", "))]}]}"#
        return try await withInputFile(file, named: "rules.yml") { path in
            try await Command.run("promtool", ["check", "rules", path.path], timeout: .seconds(60))
        }
    }

    /// Runs `body` with `text` in a scratch file named `name`, removed afterwards.
    private static func withInputFile(
        _ text: String, named name: String = "input", _ body: (URL) async throws -> Command.Result
    ) async throws -> Command.Result {
        let scratch = try TestScratch.makeDirectory(prefix: "promtool")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = scratch.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return try await body(file)
    }
}

/// Prometheus's HTTP API on 127.0.0.1:`port`, read with curl.
struct PrometheusAPI: Sendable {
    /// One series of an instant query's answer.
    struct Sample: Decodable, Sendable, CustomStringConvertible {
        /// `[unix time, "value"]`, as the API writes a point.
        struct Point: Decodable, Sendable {
            /// The value.
            let value: Double

            init(from decoder: any Decoder) throws {
                var point = try decoder.unkeyedContainer()
                _ = try point.decode(Double.self)
                value = Double(try point.decode(String.self)) ?? .nan
            }
        }

        /// The series' labels.
        let metric: [String: String]
        /// Its value now.
        let value: Point

        var description: String { "\(metric) \(value.value)" }
    }

    /// The body of `/api/v1/query`.
    private struct Answer: Decodable {
        /// `result` of a vector answer.
        struct Vector: Decodable {
            /// The series.
            let result: [Sample]
        }

        /// `success` or `error`.
        let status: String
        /// Set on success.
        let data: Vector?
        /// Set on error.
        let error: String?
    }

    /// Prometheus's port.
    let port: Int

    /// The series of the instant query `promql` now.
    func query(_ promql: String) async throws -> [Sample] {
        let text = try await get("/api/v1/query", parameters: ["query": promql])
        let answer = try JSONDecoder().decode(Answer.self, from: Data(text.utf8))
        try #require(answer.status == "success", "query \(promql) failed: \(answer.error ?? text)")
        return answer.data?.result ?? []
    }

    /// The body of GET `path` with the URL-encoded `parameters`.
    func get(_ path: String, parameters: [String: String] = [:]) async throws -> String {
        let encoded = parameters.flatMap { ["--data-urlencode", "\($0.key)=\($0.value)"] }
        let result = try await Command.run(
            "curl", ["-sS", "--fail-with-body", "--max-time", "10", "--get"] + encoded + ["http://127.0.0.1:\(port)\(path)"],
            timeout: .seconds(30))
        try #require(result.status == 0, "GET \(path) from prometheus failed: \(result)")
        return result.output
    }
}
