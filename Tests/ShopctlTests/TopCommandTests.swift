import ArgumentParser
import Foundation
import RPC
import ServiceTestSupport
import Synchronization
import Telemetry
import Testing

@testable import shopctl

/// `shopctl top`: figures between two scrapes, the screen that shows them, and the command
/// against `/metrics` stand-ins serving pages whose counters move by known amounts.
@Suite("shopctl top: calls per second, errors and p50/p99 from /metrics")
struct TopCommandTests {
    /// One method's series in a page: calls by code and cumulative duration buckets at 1 ms, 10 ms, +Inf.
    struct MethodSeries {
        var method: String
        var ok: Int
        var notFound = 0
        var buckets: [Int]
    }

    /// A page as a service writes it: calls by method and code, and the duration histogram.
    static func page(_ methods: [MethodSeries], service: String = "shop.catalog.v1.CatalogService") -> String {
        var text = "# HELP rpc_server_calls_total Calls finished, by method and gRPC status code.\n# TYPE rpc_server_calls_total counter\n"
        for series in methods {
            text += "rpc_server_calls_total{service=\"\(service)\",method=\"\(series.method)\",code=\"OK\"} \(series.ok)\n"
            if series.notFound > 0 {
                text += "rpc_server_calls_total{service=\"\(service)\",method=\"\(series.method)\",code=\"NOT_FOUND\"} \(series.notFound)\n"
            }
        }
        text += "# HELP rpc_server_call_duration_seconds How long calls took.\n# TYPE rpc_server_call_duration_seconds histogram\n"
        for series in methods {
            for (bound, count) in zip(["0.001", "0.01", "+Inf"], series.buckets) {
                text += "rpc_server_call_duration_seconds_bucket{service=\"\(service)\",method=\"\(series.method)\",le=\"\(bound)\"} \(count)\n"
            }
            text += "rpc_server_call_duration_seconds_count{service=\"\(service)\",method=\"\(series.method)\"} \(series.buckets.last ?? 0)\n"
        }
        return text + "process_open_fds 12\n"
    }

    /// The catalog's two pages: GetProduct served 100 calls in between, 20 of them NOT_FOUND,
    /// 50 within 1 ms and 50 more within 10 ms; ListProducts none.
    static let catalogPages = [
        page([
            MethodSeries(method: "GetProduct", ok: 100, buckets: [100, 100, 100]),
            MethodSeries(method: "ListProducts", ok: 50, buckets: [0, 50, 50]),
        ]),
        page([
            MethodSeries(method: "GetProduct", ok: 180, notFound: 20, buckets: [150, 200, 200]),
            MethodSeries(method: "ListProducts", ok: 50, buckets: [0, 50, 50]),
        ]),
    ]

    /// Scrapes of `pages`, `seconds` apart, as the scraper would have made them.
    static func scrapes(_ pages: [String], seconds: Int) throws -> (ProcessScrape, ProcessScrape) {
        let start = ContinuousClock.now
        return (
            .up(try MetricsParser.parse(pages[0]), at: start), .up(try MetricsParser.parse(pages[1]), at: start.advanced(by: .seconds(seconds)))
        )
    }

    static let catalog = TopTarget(name: "catalog", address: .init(host: "127.0.0.1", port: 7002))

    // MARK: Figures

    @Test("rates are the counters' increase over the time between scrapes; errors are calls not OK; p50/p99 from the buckets' increase")
    func figures() throws {
        let (earlier, later) = try Self.scrapes(Self.catalogPages, seconds: 4)
        let figures = ProcessFigures(target: Self.catalog, earlier: earlier, later: later)
        #expect(figures.up)
        #expect(figures.intervalSeconds == 4)
        let total = try #require(figures.total)
        #expect(total.callsPerSecond == 25)
        #expect(total.errorRatio == 0.2)
        // 100 calls: 50 in (0, 1 ms], 50 in (1 ms, 10 ms]: the median is the first bucket's
        // end, the 99th call 49/50 of the way through the second.
        let p50 = try #require(total.p50Seconds)
        let p99 = try #require(total.p99Seconds)
        let expectedP99 = 0.001 + 0.009 * 49.0 / 50.0
        #expect(abs(p50 - 0.001) < 1e-12)
        #expect(abs(p99 - expectedP99) < 1e-12)
        #expect(figures.methods.map(\.method) == ["GetProduct"])
        #expect(figures.methods.first?.displayName == "CatalogService/GetProduct")
        #expect(figures.methods.first?.figures == total)
    }

    @Test("methods are listed busiest first, and only those called in between")
    func busiestFirst() throws {
        let pages = [
            Self.page([
                MethodSeries(method: "A", ok: 10, buckets: [10, 10, 10]), MethodSeries(method: "B", ok: 10, buckets: [10, 10, 10]),
                MethodSeries(method: "C", ok: 10, buckets: [10, 10, 10]),
            ]),
            Self.page([
                MethodSeries(method: "A", ok: 12, buckets: [12, 12, 12]), MethodSeries(method: "B", ok: 10, buckets: [10, 10, 10]),
                MethodSeries(method: "C", ok: 20, buckets: [20, 20, 20]),
            ]),
        ]
        let (earlier, later) = try Self.scrapes(pages, seconds: 1)
        let figures = ProcessFigures(target: Self.catalog, earlier: earlier, later: later)
        #expect(figures.methods.map(\.method) == ["C", "A"])
        #expect(figures.methods.map(\.figures.callsPerSecond) == [10, 2])
        #expect(figures.methods.map(\.figures.errorRatio) == [0, 0])
    }

    @Test("a process that restarted between scrapes counts what it served since")
    func restarted() throws {
        let pages = [
            Self.page([MethodSeries(method: "GetProduct", ok: 500, notFound: 10, buckets: [510, 510, 510])]),
            Self.page([MethodSeries(method: "GetProduct", ok: 27, notFound: 3, buckets: [0, 30, 30])]),
        ]
        let (earlier, later) = try Self.scrapes(pages, seconds: 3)
        let total = try #require(ProcessFigures(target: Self.catalog, earlier: earlier, later: later).total)
        #expect(total.callsPerSecond == 10)
        #expect(total.errorRatio == 0.1)
        #expect(try #require(total.p50Seconds) > 0.001)
    }

    @Test("an idle process has no error share and no percentiles, and either scrape failing makes it down")
    func idleAndDown() throws {
        let (earlier, later) = try Self.scrapes([Self.catalogPages[0], Self.catalogPages[0]], seconds: 1)
        let idle = try #require(ProcessFigures(target: Self.catalog, earlier: earlier, later: later).total)
        #expect(idle.callsPerSecond == 0)
        #expect(idle.errorRatio == nil)
        #expect(idle.p50Seconds == nil)
        #expect(idle.p99Seconds == nil)
        for (first, second) in [(earlier, ProcessScrape.down(reason: "refused")), (.down(reason: "refused"), later)] {
            let down = ProcessFigures(target: Self.catalog, earlier: first, later: second)
            #expect(!down.up)
            #expect(down.reason == "refused")
            #expect(down.total == nil)
        }
    }

    // MARK: Screen

    /// Figures of a process `name` whose methods `M1`… served `rates` calls per second.
    static func process(_ name: String, rates: [Int]) throws -> ProcessFigures {
        let methods = rates.indices.map { MethodSeries(method: "M\($0 + 1)", ok: 0, buckets: [0, 0, 0]) }
        let moved = zip(methods, rates).map { MethodSeries(method: $0.method, ok: $1, buckets: [$1, $1, $1]) }
        let (earlier, later) = try scrapes([page(methods), page(moved)], seconds: 1)
        return ProcessFigures(target: TopTarget(name: name, address: .init(host: "127.0.0.1", port: 9)), earlier: earlier, later: later)
    }

    @Test("method rows are shared a rank at a time among processes, within the height")
    func heightIsShared() throws {
        let processes = [try Self.process("a", rates: [30, 20, 10]), try Self.process("b", rates: [5, 4, 3]), try Self.process("c", rates: [7])]
        #expect(TopScreen.methodsShown(processes, rows: 3) == [0, 0, 0])
        #expect(TopScreen.methodsShown(processes, rows: 5) == [1, 1, 0])
        #expect(TopScreen.methodsShown(processes, rows: 7) == [2, 1, 1])
        #expect(TopScreen.methodsShown(processes, rows: 100) == [3, 3, 1])
        let lines = TopScreen(processes: processes, title: "title").lines(width: 80, height: 9)
        #expect(lines.count == 9)
        #expect(lines[0] == "title")
        #expect(lines[1].hasPrefix("PROCESS"))
        #expect(lines.dropFirst(2).map { $0.split(separator: " ").first.map(String.init) } == [
            "a", "CatalogService/M1", "CatalogService/M2", "b", "CatalogService/M1", "c", "CatalogService/M1",
        ])
        #expect(lines[3].contains("CatalogService/M1") && lines[3].contains("30.0"))
        // Two lines: the title and the header, however little room is left.
        #expect(TopScreen(processes: processes, title: "title").lines(width: 80, height: 1).count == 2)
    }

    @Test("every line fits the width: names are cut first, then whole lines")
    func widthIsKept() throws {
        let processes = [try Self.process("a-process-with-a-long-name", rates: [30, 20]), try Self.process("b", rates: [5])]
        for width in [30, 50, 64] {
            let lines = TopScreen(processes: processes, title: String(repeating: "t", count: 100)).lines(width: width, height: 24)
            #expect(lines.allSatisfy { DisplayWidth.columns(of: $0) <= width }, "\(width): \(lines)")
            #expect(lines.count == 2 + 5)
        }
        let wide = TopScreen(processes: processes, title: "title").lines(width: 200, height: 24)
        #expect(wide.contains { $0.hasPrefix("a-process-with-a-long-name") })
    }

    @Test("durations read as µs, ms or s; missing figures as -")
    func durations() {
        #expect(TopScreen.duration(0.00042) == "420µs")
        #expect(TopScreen.duration(0.0125) == "12.5ms")
        #expect(TopScreen.duration(1.25) == "1.25s")
        #expect(TopScreen.duration(nil) == "-")
    }

    // MARK: The command

    /// Output written by a command run in-process.
    final class CapturedOutput: Sendable {
        private let data = Mutex(Data())
        /// Appends `bytes`.
        func append(_ bytes: Data) { data.withLock { $0.append(bytes) } }
        /// Everything so far, as text.
        var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }
    }

    /// Runs `shopctl top arguments` in-process (parsed as `Shopctl.main` parses) with a
    /// terminal of `columns` × `rows`, until it returns; what it printed.
    static func runTop(
        _ arguments: [String], columns: Int? = 80, rows: Int? = 24, terminal: Bool = false,
        interruptions: AsyncStream<Void>? = nil, output: CapturedOutput = CapturedOutput()
    ) async throws -> String {
        let context = ProcessContext(
            environment: ["XDG_CONFIG_HOME": "/nonexistent/shopctl-top-test"], readStandardInput: { Data() },
            writeStandardOutput: { output.append($0) }, interruptions: interruptions, terminalColumns: columns, terminalRows: rows,
            outputIsTerminal: terminal)
        try await ProcessContext.$current.withValue(context) {
            let command = try Shopctl.parseAsRoot(GlobalOptions.hoisted(["top"] + arguments))
            let top = try #require(command as? TopCommand)
            try await top.run()
        }
        return output.text
    }

    /// Targets for the catalog stand-in, a port nobody listens on, and a server answering 404.
    static func standIns() throws -> (servers: [MetricsPageServer], arguments: [String]) {
        let catalog = try MetricsPageServer(pages: catalogPages)
        let missing = try MetricsPageServer(pages: ["not here"], status: 404)
        let arguments = [
            "--target", "catalog=127.0.0.1:\(catalog.port)", "--target", "auth=127.0.0.1:\(try deadPort())", "--target",
            "gateway=127.0.0.1:\(missing.port)", "--timeout", "60",
        ]
        return ([catalog, missing], arguments)
    }

    @Test("--once --json: each target's figures between two scrapes, down ones with their reason")
    func onceJSON() async throws {
        let (servers, arguments) = try Self.standIns()
        let text = try await Self.runTop(arguments + ["--once", "--interval", "0.3", "--json"])
        #expect(servers[0].requestCount == 2)
        let lines = text.split(separator: "\n")
        try #require(lines.count == 1, "\(text)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        let interval = try #require(document["intervalSeconds"] as? Double)
        #expect(interval >= 0.3)
        let processes = try #require(document["processes"] as? [[String: Any]])
        #expect(processes.map { $0["name"] as? String } == ["catalog", "auth", "gateway"])
        let total = try #require(processes[0]["total"] as? [String: Any])
        // The stand-in's counters moved by 100 calls, 20 of them NOT_FOUND.
        #expect(try abs(#require(total["callsPerSecond"] as? Double) * interval - 100) < 1e-6)
        #expect(total["errorRatio"] as? Double == 0.2)
        #expect(try abs(#require(total["p99Seconds"] as? Double) - 0.00982) < 1e-9)
        let methods = try #require(processes[0]["methods"] as? [[String: Any]])
        #expect(methods.map { $0["method"] as? String } == ["GetProduct"])
        #expect(processes[1]["up"] as? Bool == false)
        #expect((processes[1]["reason"] as? String)?.contains("refused") == true, "\(processes[1])")
        #expect(processes[2]["up"] as? Bool == false)
        #expect(processes[2]["reason"] as? String == "/metrics answered HTTP 404")
    }

    @Test("--once: one table fitted to the terminal, the process, its busy method, and down rows")
    func onceTable() async throws {
        let (servers, arguments) = try Self.standIns()
        let text = try await Self.runTop(arguments + ["--once", "--interval", "0.2"], columns: 80, rows: 24)
        #expect(servers[0].requestCount == 2)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "shopctl top: 1 of 3 processes up, every 0.2 s", "\(text)")
        #expect(lines.allSatisfy { DisplayWidth.columns(of: $0) <= 80 }, "\(text)")
        let figures = ["20.0%", "1.0ms", "9.8ms"]
        let catalog = try #require(lines.first { $0.hasPrefix("catalog ") }, "\(text)")
        #expect(catalog.split(separator: " ").suffix(3).map(String.init) == figures, "\(catalog)")
        let method = try #require(lines.first { $0.hasPrefix("  CatalogService/GetProduct ") }, "\(text)")
        #expect(method.split(separator: " ").suffix(3).map(String.init) == figures, "\(method)")
        #expect(lines.contains { $0.hasPrefix("auth ") && $0.hasSuffix("down") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("gateway ") && $0.hasSuffix("down") }, "\(text)")
        #expect(!text.contains("ListProducts"))
        #expect(!text.contains("\u{1B}"))
    }

    @Test("live on a terminal: redraws in place each interval, and an interruption ends it normally")
    func liveUntilInterrupted() async throws {
        let server = try MetricsPageServer(pages: Self.catalogPages)
        let (interruptions, interrupt) = AsyncStream<Void>.makeStream()
        let output = CapturedOutput()
        let run = Task {
            try await Self.runTop(
                ["--target", "catalog=127.0.0.1:\(server.port)", "--interval", "0.1"], terminal: true, interruptions: interruptions,
                output: output)
        }
        // Generous: on a busy machine the cooperative pool may wake the loop's sleeps late.
        let screens = await eventually(within: .seconds(60)) { output.text.components(separatedBy: TopDisplay.clearScreen).count >= 4 }
        #expect(screens, "\(output.text)")
        interrupt.yield()
        let text = try await run.value
        #expect(text.hasPrefix(TopDisplay.clearScreen + "shopctl top: reading 1 processes every 0.1 s"))
        #expect(text.contains(TopDisplay.clearScreen + "shopctl top: 1 of 1 processes up, every 0.1 s; Ctrl-C quits"))
        // The second screen shows the pages' difference; later ones the last page against itself.
        #expect(text.contains("20.0%"))
        #expect(server.requestCount >= 3)
    }

    @Test(
        "refuses malformed targets, a name given twice, and an interval out of range",
        arguments: [
            ["--target", "catalog"], ["--target", "catalog=127.0.0.1"], ["--target", "=127.0.0.1:7002"], ["--target", "a=127.0.0.1:0"],
            ["--target", "a=127.0.0.1:1", "--target", "a=127.0.0.1:2"], ["--interval", "0"], ["--interval", "-1"],
        ])
    func refusesBadArguments(arguments: [String]) {
        let context = ProcessContext(environment: [:], readStandardInput: { Data() }, writeStandardOutput: { _ in })
        #expect(throws: (any Error).self, "\(arguments)") {
            try ProcessContext.$current.withValue(context) { _ = try Shopctl.parseAsRoot(GlobalOptions.hoisted(["top"] + arguments)) }
        }
    }

    @Test("with no --target, the processes deploy/compose starts on loopback")
    func defaultTargets() throws {
        let context = ProcessContext(environment: [:], readStandardInput: { Data() }, writeStandardOutput: { _ in })
        let top = try ProcessContext.$current.withValue(context) { try #require(try Shopctl.parseAsRoot(["top"]) as? TopCommand) }
        #expect(top.targets.map { "\($0.name)=\($0.address)" } == [
            "gateway=127.0.0.1:8080", "auth=127.0.0.1:7001", "catalog=127.0.0.1:7002", "basket=127.0.0.1:7003", "order=127.0.0.1:7004",
        ])
        #expect(top.interval == 2)
        #expect(!top.once)
    }
}
