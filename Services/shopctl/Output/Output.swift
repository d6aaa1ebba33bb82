import Foundation

/// Where results go: standard output, written unbuffered line by line (so a watch shows each
/// update as it arrives, even into a pipe), as people read them or — with `--json` — as the
/// raw response messages, one JSON document per line.
struct Output: Sendable {
    /// Whether `--json` was given.
    let json: Bool

    /// Writes `raw` (a response message) in JSON mode, `human()` otherwise.
    func message(_ raw: Data, human: () -> String) {
        if json {
            write(raw + Data("\n".utf8))
        } else {
            line(human())
        }
    }

    /// Writes `text` in human mode only (notes such as "Signed out.").
    func note(_ text: String) {
        if !json { line(text) }
    }

    /// Writes `text` and a newline, whatever the mode.
    func line(_ text: String) {
        write(Data((text + "\n").utf8))
    }

    private func write(_ data: Data) {
        ProcessContext.current.writeStandardOutput(data)
    }

    /// Writes one line to standard error.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Writes a failure to standard error: its one line, or with `json` its JSON object.
    static func report(_ report: ErrorReport, json: Bool) {
        error(json ? report.json : report.line)
    }
}
