import ArgumentParser
import Foundation
import RPC

/// `shopctl top`: a live view of what each process serves — calls per second, the share that
/// failed, p50 and p99 durations, per process and for its busiest methods — read from the
/// processes' own `/metrics`, not through the gateway.
struct TopCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "Watch each process's calls per second, errors and p50/p99 latency, read from its /metrics.",
        discussion: """
            Reads http://HOST:PORT/metrics of every target each interval and shows what was served in \
            between: calls per second, the share that ended with a code other than OK, and the median and \
            99th percentile of their durations (interpolated in the histogram's buckets, as Prometheus's \
            histogram_quantile does). Each process's busiest methods follow it, as many as the terminal's \
            height leaves room for; a process that cannot be read within --timeout shows as down. By default \
            the targets are what deploy/compose starts on 127.0.0.1: gateway 8080, auth 7001, catalog 7002, \
            basket 7003 and order 7004 (the gateway serves /metrics to loopback peers only, unless \
            --metrics-public). Ctrl-C quits. --once prints the figures of one interval and exits; --json \
            prints each interval's figures as one JSON document.

            Examples:
              shopctl top
              shopctl top --target catalog=127.0.0.1:7002 --target order=127.0.0.1:7004
              shopctl top --interval 10
              shopctl top --once --json | jq '.processes[].total.callsPerSecond'
            """)

    /// `--json`, and `--timeout`, which bounds each scrape.
    @OptionGroup var global: GlobalOptions

    /// The processes given with `--target`; the compose defaults when none.
    @Option(
        name: .customLong("target"),
        help: ArgumentHelp("A process to watch, name=host:port (repeat for more; default: deploy/compose's).", valueName: "name=host:port"))
    var targetArguments: [String] = []

    /// Seconds between scrapes.
    @Option(parsing: .unconditional, help: "Seconds between scrapes, 0.1 to 3600.")
    var interval: Double = 2

    /// Whether to print one table and exit.
    @Flag(help: "Print the figures of one interval (two scrapes) and exit.")
    var once = false

    /// The targets: those of `--target` (which ``validate()`` checked), else compose's.
    var targets: [TopTarget] {
        targetArguments.isEmpty ? TopTarget.composeDefaults : targetArguments.compactMap(TopTarget.init(argument:))
    }

    /// Refuses a malformed target, two targets of one name, and an interval out of range.
    mutating func validate() throws {
        for argument in targetArguments where TopTarget(argument: argument) == nil {
            throw ValidationError("--target must be name=host:port, not '\(argument)'.")
        }
        let names = targets.map(\.name)
        if let repeated = names.first(where: { name in names.filter { $0 == name }.count > 1 }) {
            throw ValidationError("--target names \(repeated) twice.")
        }
        guard interval >= 0.1, interval <= 3600 else { throw ValidationError("--interval must be 0.1 to 3600 seconds.") }
    }

    /// Scrapes, waits an interval, scrapes again and shows the figures in between: once, or
    /// every interval until interrupted.
    func run() async throws {
        let targets = targets
        let pause = Duration.milliseconds(Int(interval * 1000))
        // Each scrape may take up to --timeout, not just the interval: a process slow to answer
        // (a busy machine) delays a screen rather than showing as down.
        let scrapeTimeout = Duration.milliseconds(Int(global.timeout * 1000))
        let display = TopDisplay(json: global.json, intervalText: Self.secondsText(interval), targetCount: targets.count)
        if once {
            let earlier = try await MetricsScraper.scrape(targets, timeout: scrapeTimeout)
            try await Task.sleep(for: pause)
            let later = try await MetricsScraper.scrape(targets, timeout: scrapeTimeout)
            try display.show(Self.figures(targets, earlier, later), live: false)
            return
        }
        _ = try await Interruption.run {
            var earlier = try await MetricsScraper.scrape(targets, timeout: scrapeTimeout)
            display.waiting()
            while true {
                try await Task.sleep(for: pause)
                let later = try await MetricsScraper.scrape(targets, timeout: scrapeTimeout)
                try display.show(Self.figures(targets, earlier, later), live: true)
                earlier = later
            }
        }
    }

    /// Each target's figures between its two scrapes.
    static func figures(_ targets: [TopTarget], _ earlier: [ProcessScrape], _ later: [ProcessScrape]) -> [ProcessFigures] {
        targets.indices.map { ProcessFigures(target: targets[$0], earlier: earlier[$0], later: later[$0]) }
    }

    /// `2 s`, `0.5 s`: an interval for the title.
    static func secondsText(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}

/// Where `shopctl top`'s figures go: a screen fitted to the terminal (redrawn in place when
/// standard output is one) or, with `--json`, one JSON document per interval.
struct TopDisplay: Sendable {
    /// Whether `--json` was given.
    let json: Bool
    /// The interval, for the title.
    let intervalText: String
    /// How many processes are watched, for the first screen.
    let targetCount: Int

    /// The size assumed when the terminal's (or `COLUMNS`/`LINES`) is unknown.
    static let defaultSize = (columns: 80, rows: 24)
    /// ANSI: cursor home, then erase the display.
    static let clearScreen = "\u{1B}[H\u{1B}[2J"

    /// Shows the first screen while the first interval passes (not with `--json`).
    func waiting() {
        guard !json else { return }
        draw(["shopctl top: reading \(targetCount) processes every \(intervalText)…"], live: true)
    }

    /// Shows `figures`; `live` screens are redrawn in place on a terminal and leave the last
    /// line free, so drawing never scrolls.
    func show(_ figures: [ProcessFigures], live: Bool) throws {
        if json {
            let document = TopDocument(intervalSeconds: figures.compactMap(\.intervalSeconds).max(), processes: figures)
            Output(json: true).line(String(decoding: try JSONCodec.shared.encode(document), as: UTF8.self))
            return
        }
        let context = ProcessContext.current
        let up = figures.filter(\.up).count
        let screen = TopScreen(
            processes: figures, title: "shopctl top: \(up) of \(figures.count) processes up, every \(intervalText)"
                + (live ? "; Ctrl-C quits" : ""))
        let height = (context.terminalRows ?? Self.defaultSize.rows) - (live ? 1 : 0)
        draw(screen.lines(width: context.terminalColumns ?? Self.defaultSize.columns, height: height), live: live)
    }

    /// Writes `lines`, clearing the terminal first when live on one; into a pipe, live
    /// screens are followed by a blank line instead.
    private func draw(_ lines: [String], live: Bool) {
        let text = lines.joined(separator: "\n")
        if live && ProcessContext.current.outputIsTerminal {
            Output(json: false).line(Self.clearScreen + text)
        } else {
            Output(json: false).line(live ? text + "\n" : text)
        }
    }
}

/// `--json`'s document for one interval.
struct TopDocument: Encodable {
    /// The longest interval between a process's two scrapes; nil when every process is down.
    let intervalSeconds: Double?
    /// Each target's figures, in the targets' order.
    let processes: [ProcessFigures]
}
