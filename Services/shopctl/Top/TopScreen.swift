import Foundation

/// What `shopctl top` draws: a title line, then a table of each process's calls per second,
/// failure share and p50/p99 durations, each up process followed (indented) by its busiest
/// methods — as many as the height leaves room for, shared out a rank at a time so every
/// process shows its busiest before any shows its second. Down processes say `down`. Every
/// line is cut to the width. Pure.
struct TopScreen {
    /// The figures, one per target, in the targets' order.
    let processes: [ProcessFigures]
    /// The first line.
    let title: String

    /// The lines to draw in `width` columns and at most `height` lines (at least the title
    /// and the header).
    func lines(width: Int, height: Int) -> [String] {
        var table = Table([
            .init("PROCESS", shrinks: true), .init("ADDRESS"), .init("CALLS/S", .right), .init("ERRORS", .right),
            .init("P50", .right), .init("P99", .right),
        ])
        let shown = Self.methodsShown(processes, rows: max(0, height - 2))
        for (process, methodCount) in zip(processes, shown) {
            guard let total = process.total else {
                table.append([process.name, process.address, "down"])
                continue
            }
            table.append([process.name, process.address] + Self.cells(total))
            for method in process.methods.prefix(methodCount) {
                table.append(["  " + method.displayName, ""] + Self.cells(method.figures))
            }
        }
        let rendered = table.render(width: width).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return ([title] + rendered).prefix(max(2, height)).map { DisplayWidth.truncate($0, to: width) }
    }

    /// How many method rows each process gets when `rows` lines are left for the table's
    /// body: a line per process first (down ones too), then one method per up process per
    /// round, busiest first, while lines and methods last.
    static func methodsShown(_ processes: [ProcessFigures], rows: Int) -> [Int] {
        var shown = processes.map { _ in 0 }
        var left = rows - processes.count
        var round = 0
        while left > 0 {
            let takers = processes.indices.filter { processes[$0].methods.count > round }
            guard !takers.isEmpty else { break }
            for index in takers where left > 0 {
                shown[index] += 1
                left -= 1
            }
            round += 1
        }
        return shown
    }

    /// A row's figure cells: calls per second, failure share, p50, p99.
    static func cells(_ figures: CallFigures) -> [String] {
        [
            String(format: "%.1f", figures.callsPerSecond),
            figures.errorRatio.map { String(format: "%.1f%%", $0 * 100) } ?? "-",
            duration(figures.p50Seconds), duration(figures.p99Seconds),
        ]
    }

    /// A duration for people: `420µs`, `12.5ms`, `1.25s`; `-` when there is none.
    static func duration(_ seconds: Double?) -> String {
        guard let seconds else { return "-" }
        if seconds < 0.001 { return String(format: "%.0fµs", seconds * 1e6) }
        if seconds < 1 { return String(format: "%.1fms", seconds * 1e3) }
        return String(format: "%.2fs", seconds)
    }
}
