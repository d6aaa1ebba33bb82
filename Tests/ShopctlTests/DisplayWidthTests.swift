import Testing

@testable import shopctl

/// Terminal columns of text: wide East Asian characters and emoji take two, combining marks none.
@Suite("DisplayWidth: columns as a terminal draws them")
struct DisplayWidthTests {
    @Test(
        "measures each grapheme by its first scalar and its variation selector",
        arguments: [
            ("abc", 3), ("日本", 4), ("湯呑み", 6), ("한국", 4), ("Ａ", 2), ("ｶ", 1), ("😀", 2), ("🎧 Headphones", 13),
            ("👨‍👩‍👧", 2), ("🇯🇵", 2), ("❤️", 2), ("❤", 1), ("1️⃣", 2), ("e\u{301}", 1), ("\u{301}", 0), ("a\u{200B}b", 2),
            ("", 0),
        ] as [(String, Int)])
    func columns(text: String, expected: Int) {
        #expect(DisplayWidth.columns(of: text) == expected, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test("every scalar Unicode shows as emoji by default is in the two-column table")
    func emojiPresentationIsWide() {
        let missing = (UInt32(0x2000)...0x1FAFF).compactMap(Unicode.Scalar.init).filter { scalar in
            scalar.properties.isEmojiPresentation && DisplayWidth.columns(of: Character(scalar)) != 2
        }
        #expect(missing.isEmpty, "\(missing.map { String($0.value, radix: 16) })")
    }

    @Test("the range tables are sorted and disjoint, so the binary search finds every range")
    func tablesAreSorted() {
        for table in [DisplayWidth.wide, DisplayWidth.zero] {
            #expect(zip(table, table.dropFirst()).allSatisfy { $0.upperBound < $1.lowerBound })
        }
    }

    @Test("cuts by columns, never splitting a wide character past the limit")
    func truncatesByColumns() {
        #expect(DisplayWidth.truncate("日本語のタイトル", to: 7) == "日本語…")
        #expect(DisplayWidth.truncate("😀😀😀😀", to: 6) == "😀😀…")
        #expect(DisplayWidth.truncate("日本", to: 4) == "日本")
        #expect(DisplayWidth.columns(of: DisplayWidth.truncate("ab日本語", to: 6)) <= 6)
    }
}
