/// A plain-text table for people: a header row and rows of cells, each column as wide as its
/// widest cell (in terminal columns, ``DisplayWidth``), separated by two spaces; numbers
/// right-aligned, text left-aligned; narrowed to the output's width by cutting free text.
///
/// A value type; rendering has no side effects.
struct Table: Sendable, Equatable {
    /// How a column's cells line up.
    enum Alignment: Sendable, Equatable {
        /// Text: padded on the right.
        case left
        /// Numbers and amounts: padded on the left.
        case right
    }

    /// One column: its heading, alignment, and whether it may be cut to fit.
    struct Column: Sendable, Equatable {
        /// The heading, written in capitals by convention.
        var title: String
        /// How the heading and cells line up.
        var alignment: Alignment
        /// Whether the column holds free text (a title) whose cells may be cut, ending in "…",
        /// when the table is wider than the output; ids, numbers and amounts never are.
        var shrinks: Bool

        /// A column titled `title`, left-aligned unless told otherwise, never cut unless `shrinks`.
        init(_ title: String, _ alignment: Alignment = .left, shrinks: Bool = false) {
            self.title = title
            self.alignment = alignment
            self.shrinks = shrinks
        }
    }

    /// How narrow a shrinking column may become (or its heading, if that is wider): enough
    /// to tell titles apart by their first letters.
    static let minimumShrunkWidth = 8

    /// The columns, in order.
    var columns: [Column]
    /// The rows; a row shorter than `columns` is padded with empty cells.
    private(set) var rows: [[String]] = []

    /// A table with `columns` and no rows yet.
    init(_ columns: [Column]) {
        self.columns = columns
    }

    /// Appends a row of cells.
    mutating func append(_ cells: [String]) {
        rows.append(cells)
    }

    /// The rendered table: one line per row after the header, no trailing spaces, no final
    /// newline. When `limit` is given (the output's width; the terminal's by default) and the
    /// table is wider, the widest shrinking column is cut first, down to
    /// ``minimumShrunkWidth``, then the next; a table with nothing left to cut stays wider.
    func render(width limit: Int? = ProcessContext.current.terminalColumns) -> String {
        let all = [columns.map(\.title)] + rows
        var widths = columns.map { _ in 0 }
        for row in all {
            for (index, cell) in row.prefix(columns.count).enumerated() {
                widths[index] = max(widths[index], DisplayWidth.columns(of: cell))
            }
        }
        if let limit { widths = fitted(widths, into: limit) }
        return all.map { row in
            var line = ""
            for index in columns.indices {
                var cell = index < row.count ? row[index] : ""
                if DisplayWidth.columns(of: cell) > widths[index] { cell = DisplayWidth.truncate(cell, to: widths[index]) }
                let padding = String(repeating: " ", count: max(0, widths[index] - DisplayWidth.columns(of: cell)))
                if index > 0 { line += "  " }
                line += columns[index].alignment == .right ? padding + cell : cell + padding
            }
            return String(line.reversed().drop(while: { $0 == " " }).reversed())
        }.joined(separator: "\n")
    }

    /// `widths` with the widest shrinking column narrowed, a column at a time, until a line
    /// (columns and the two-space gaps) fits `limit` or no shrinking column can lose more.
    private func fitted(_ widths: [Int], into limit: Int) -> [Int] {
        var widths = widths
        let floors = columns.map { max(Self.minimumShrunkWidth, DisplayWidth.columns(of: $0.title)) }
        var excess = widths.reduce(0, +) + 2 * (widths.count - 1) - limit
        while excess > 0 {
            let candidates = columns.indices.filter { columns[$0].shrinks && widths[$0] > floors[$0] }
            guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { break }
            widths[widest] -= 1
            excess -= 1
        }
        return widths
    }

    /// The columns `text` takes on a terminal (``DisplayWidth``).
    static func width(of text: String) -> Int {
        DisplayWidth.columns(of: text)
    }

    /// `text` cut to at most `limit` columns, ending in "…" when something was cut (``DisplayWidth``).
    static func truncate(_ text: String, to limit: Int) -> String {
        DisplayWidth.truncate(text, to: limit)
    }
}
