import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How wide the output may be, for tables to fit: the terminal's width (`TIOCGWINSZ`) when
/// standard output is a terminal, else `COLUMNS` as the shell exported it, else no limit
/// (a pipe or a file takes lines of any length).
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

    /// The width the terminal on `descriptor` reports; nil when it is no terminal or reports 0
    /// (a pseudo-terminal nobody sized).
    static func terminalColumns(_ descriptor: Int32) -> Int? {
        guard isatty(descriptor) == 1 else { return nil }
        var size = winsize()
        let result = withUnsafeMutablePointer(to: &size) { ioctl(descriptor, UInt(TIOCGWINSZ), $0) }
        guard result == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
