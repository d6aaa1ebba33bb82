import Testing

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
}
