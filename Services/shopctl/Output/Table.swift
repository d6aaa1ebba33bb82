/// A plain-text table for people: a header row and rows of cells, each column as wide as its
/// widest cell, separated by two spaces; numbers right-aligned, text left-aligned.
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

    /// One column: its heading and alignment.
    struct Column: Sendable, Equatable {
        /// The heading, written in capitals by convention.
        var title: String
        /// How the heading and cells line up.
        var alignment: Alignment

        /// A column titled `title`, left-aligned unless told otherwise.
        init(_ title: String, _ alignment: Alignment = .left) {
            self.title = title
            self.alignment = alignment
        }
    }

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

    /// The rendered table: one line per row after the header, no trailing spaces, no final newline.
    func render() -> String {
        let all = [columns.map(\.title)] + rows
        var widths = columns.map { _ in 0 }
        for row in all {
            for (index, cell) in row.prefix(columns.count).enumerated() {
                widths[index] = max(widths[index], Self.width(of: cell))
            }
        }
        return all.map { row in
            var line = ""
            for index in columns.indices {
                let cell = index < row.count ? row[index] : ""
                let padding = String(repeating: " ", count: widths[index] - Self.width(of: cell))
                if index > 0 { line += "  " }
                line += columns[index].alignment == .right ? padding + cell : cell + padding
            }
            return String(line.reversed().drop(while: { $0 == " " }).reversed())
        }.joined(separator: "\n")
    }

    /// The columns a cell takes on a terminal: one per character, two for wide East Asian
    /// characters and emoji, so that such titles do not push the next column out of line.
    static func width(of text: String) -> Int {
        text.reduce(0) { total, character in
            guard let scalar = character.unicodeScalars.first else { return total }
            return total + (isWide(scalar) ? 2 : 1)
        }
    }

    /// `text` cut to at most `limit` columns, ending in "…" when something was cut.
    static func truncate(_ text: String, to limit: Int) -> String {
        guard width(of: text) > limit, limit > 1 else { return text }
        var result = ""
        var used = 0
        for character in text {
            let next = width(of: String(character))
            if used + next > limit - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }

    /// Whether `scalar` is drawn two columns wide (Unicode East Asian Wide/Fullwidth, roughly).
    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            true
        default:
            false
        }
    }
}
