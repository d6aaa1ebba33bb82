import Foundation

/// The human-readable layouts of shopctl's results; the domain layouts live in extensions
/// (`HumanText+Catalog`, `+Basket`, `+Orders`, `+Accounts`). Pure functions of the messages.
enum HumanText {
    /// `pairs` as aligned "Label:  value" lines, skipping empty values.
    static func fields(_ pairs: [(String, String)]) -> String {
        let shown = pairs.filter { !$0.1.isEmpty }
        let width = shown.map { DisplayWidth.columns(of: $0.0) }.max() ?? 0
        return shown.map { label, value in
            label + ":" + String(repeating: " ", count: width - DisplayWidth.columns(of: label) + 2) + value
        }.joined(separator: "\n")
    }

    /// `text` broken into lines of at most `width` columns at spaces, each indented by `indent`.
    static func wrap(_ text: String, width: Int = 76, indent: String = "  ") -> String {
        var lines: [String] = []
        var current = ""
        for word in text.split(whereSeparator: \.isWhitespace) {
            if !current.isEmpty && DisplayWidth.columns(of: current) + 1 + DisplayWidth.columns(of: String(word)) > width - indent.count {
                lines.append(indent + current)
                current = ""
            }
            current += current.isEmpty ? String(word) : " " + word
        }
        if !current.isEmpty { lines.append(indent + current) }
        return lines.joined(separator: "\n")
    }

    /// "1 item" or "3 items".
    static func count(_ number: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(number) \(number == 1 ? singular : plural ?? singular + "s")"
    }

    /// The "more pages" note of a list: how to ask for the next page, or nothing on the last.
    /// `command` is already a shell command line; the token, opaque and the server's, is quoted.
    static func nextPage(_ token: String, command: String) -> String? {
        token.isEmpty ? nil : "More: \(command) --page-token \(ShellWord.quoted(token))"
    }

    /// A rating as "4.5 (120)".
    static func rating(_ rate: Double, count: Int) -> String {
        String(format: "%.1f (%d)", rate, count)
    }
}
