import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import shopctl

/// The one table formatter behind every list shopctl prints.
@Suite("Table: aligned columns for people")
struct TableTests {
    @Test("pads each column to its widest cell, text left and numbers right")
    func alignsColumns() {
        var table = Table([.init("ID", .right), .init("TITLE"), .init("PRICE", .right)])
        table.append(["1", "Backpack", "$109.95"])
        table.append(["12", "Tee", "$9.99"])
        #expect(
            table.render() == """
                ID  TITLE       PRICE
                 1  Backpack  $109.95
                12  Tee         $9.99
                """)
    }

    @Test("leaves no trailing spaces and pads short rows with empty cells")
    func trimsTrailingSpaces() {
        var table = Table([.init("NAME"), .init("NOTE")])
        table.append(["a much longer name"])
        table.append(["x", "y"])
        let lines = table.render().split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines == ["NAME                NOTE", "a much longer name", "x                   y"])
        #expect(lines.allSatisfy { !$0.hasSuffix(" ") })
    }

    @Test("counts wide characters as two columns so the next column stays in line")
    func wideCharacters() {
        var table = Table([.init("TITLE"), .init("N", .right)])
        table.append(["日本", "1"])
        table.append(["abcd", "2"])
        let lines = table.render().split(separator: "\n").map(String.init)
        #expect(lines[1] == "日本   1")
        #expect(lines[2] == "abcd   2")
        #expect(Table.width(of: "日本") == 4)
    }

    @Test("truncates long cells with an ellipsis within the limit")
    func truncates() {
        #expect(Table.truncate("Short", to: 10) == "Short")
        #expect(Table.truncate("A rather long product title", to: 10) == "A rather …")
        #expect(Table.width(of: Table.truncate("A rather long product title", to: 10)) == 10)
    }

    @Test("a table with no rows is its header")
    func headerOnly() {
        #expect(Table([.init("A"), .init("B", .right)]).render() == "A  B")
    }

    /// A basket-like table: an id, a free-text title that may be cut, and an amount.
    private static func titled(_ titles: [String]) -> Table {
        var table = Table([.init("ITEM"), .init("TITLE", shrinks: true), .init("PRICE", .right)])
        for (index, title) in titles.enumerated() { table.append(["1a2b3c4\(index)", title, "$109.95"]) }
        return table
    }

    @Test("fits the width by cutting the free-text column with an ellipsis, ids and amounts whole")
    func fitsWidth() {
        let table = Self.titled(["Fjallraven Foldsack No. 1 Backpack, Fits 15 Laptops", "Tee"])
        let lines = table.render(width: 40).split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { DisplayWidth.columns(of: $0) <= 40 }, "\(lines)")
        #expect(lines[1].hasPrefix("1a2b3c40  Fjallraven"))
        #expect(lines[1].contains("…"))
        #expect(lines[1].hasSuffix("$109.95"))
        #expect(lines[2].hasSuffix("$109.95"))
        #expect(table.render(width: nil).contains("Fits 15 Laptops"))
        #expect(table.render(width: 200) == table.render(width: nil))
    }

    @Test("wide titles are cut by display width and the next column stays in line")
    func fitsWideCharacters() {
        let table = Self.titled(["湯呑み 日本製 伝統工芸品 職人の手作り 😀 ギフト", "Mug"])
        let lines = table.render(width: 36).split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { DisplayWidth.columns(of: $0) <= 36 }, "\(lines)")
        let priceColumns = lines.map { DisplayWidth.columns(of: $0) }
        #expect(Set(priceColumns).count == 1, "every line ends at the price column: \(lines)")
    }

    @Test("a column is cut no narrower than its floor, and a table with nothing to cut stays as wide as it is")
    func shrinkFloor() {
        let lines = Self.titled(["A long enough title to cut"]).render(width: 10).split(separator: "\n").map(String.init)
        #expect(lines[1] == "1a2b3c40  A long …  $109.95")
        var fixed = Table([.init("ORDER"), .init("STATUS")])
        fixed.append(["56edd6eb-0000-4000-8000-000000000000", "PAID"])
        #expect(fixed.render(width: 20) == fixed.render(width: nil))
    }

    @Test("the width is the terminal's on a terminal, else COLUMNS, else none")
    func terminalWidth() throws {
        var pipe: [Int32] = [0, 0]
        #expect(Glibc.pipe(&pipe) == 0)
        defer { close(pipe[0]); close(pipe[1]) }
        #expect(TerminalSize.columns(environment: ["COLUMNS": "72"], descriptor: pipe[1]) == 72)
        #expect(TerminalSize.columns(environment: ["COLUMNS": "wide"], descriptor: pipe[1]) == nil)
        #expect(TerminalSize.columns(environment: [:], descriptor: pipe[1]) == nil)
        let pty = try #require(PseudoTerminal())
        defer { pty.close() }
        let (master, terminal) = (pty.master, pty.terminal)
        var size = winsize(ws_row: 24, ws_col: 57, ws_xpixel: 0, ws_ypixel: 0)
        #expect(withUnsafeMutablePointer(to: &size) { ioctl(master, UInt(TIOCSWINSZ), $0) } == 0)
        #expect(TerminalSize.columns(environment: ["COLUMNS": "72"], descriptor: terminal) == 57)
    }
}

/// A pseudo-terminal pair for tests: `terminal` behaves as a terminal device (line
/// discipline, echo, window size) and `master` is the other end, where a test types and reads
/// what the terminal shows. Opened through `/dev/ptmx` (glibc's `posix_openpt` family is not
/// visible to Swift).
struct PseudoTerminal {
    /// The controlling side: what is written here is typed on `terminal`.
    let master: Int32
    /// The terminal device.
    let terminal: Int32

    // Linux's generic ioctl numbers (asm-generic/ioctls.h): _IOR('T', 0x30, unsigned int) and
    // _IOW('T', 0x31, int), function-like macros Swift does not import.
    private static let getNumber: UInt = 0x8004_5430
    private static let setLock: UInt = 0x4004_5431

    /// Opens a new pair; nil when the system has no pseudo-terminals to give.
    init?() {
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { return nil }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard withUnsafeMutablePointer(to: &unlock, { ioctl(master, Self.setLock, $0) }) == 0,
            withUnsafeMutablePointer(to: &number, { ioctl(master, Self.getNumber, $0) }) == 0
        else {
            Glibc.close(master)
            return nil
        }
        let terminal = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else {
            Glibc.close(master)
            return nil
        }
        self.master = master
        self.terminal = terminal
    }

    /// Closes both ends.
    func close() {
        Glibc.close(terminal)
        Glibc.close(master)
    }
}
