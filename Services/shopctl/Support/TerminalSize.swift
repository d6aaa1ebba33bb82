import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How wide (and high) the output may be, for tables to fit: the terminal's size (`TIOCGWINSZ`)
/// when standard output is a terminal, else `COLUMNS` (`LINES`) as the shell exported it, else
/// no limit (a pipe or a file takes lines of any length).
enum TerminalSize {
    /// The columns available on `descriptor` (standard output by default), falling back to
    /// `COLUMNS` in `environment`; nil when neither says.
    static func columns(environment: [String: String], descriptor: Int32 = STDOUT_FILENO) -> Int? {
        if let width = terminalColumns(descriptor) { return width }
        guard let text = environment["COLUMNS"], let width = Int(text.trimmingCharacters(in: .whitespaces)), width > 0 else {
            return nil
        }
        return width
    }

    /// The lines available on `descriptor` (standard output by default), falling back to
    /// `LINES` in `environment`; nil when neither says (`shopctl top` fits its screen into them).
    static func rows(environment: [String: String], descriptor: Int32 = STDOUT_FILENO) -> Int? {
        if let height = terminalWindow(descriptor).map({ Int($0.ws_row) }), height > 0 { return height }
        guard let text = environment["LINES"], let height = Int(text.trimmingCharacters(in: .whitespaces)), height > 0 else {
            return nil
        }
        return height
    }

    /// Whether `descriptor` (standard output by default) is a terminal.
    static func isTerminal(_ descriptor: Int32 = STDOUT_FILENO) -> Bool {
        isatty(descriptor) == 1
    }

    /// The width the terminal on `descriptor` reports; nil when it is no terminal or reports 0
    /// (a pseudo-terminal nobody sized).
    static func terminalColumns(_ descriptor: Int32) -> Int? {
        guard let size = terminalWindow(descriptor), size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// The window size the terminal on `descriptor` reports; nil when it is no terminal.
    private static func terminalWindow(_ descriptor: Int32) -> winsize? {
        guard isTerminal(descriptor) else { return nil }
        var size = winsize()
        let result = withUnsafeMutablePointer(to: &size) { ioctl(descriptor, UInt(TIOCGWINSZ), $0) }
        return result == 0 ? size : nil
    }
}
