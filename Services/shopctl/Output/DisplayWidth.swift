/// How many terminal columns text takes, as terminals draw it: two for East Asian Wide and
/// Fullwidth characters and for emoji shown as emoji, none for a combining mark or a format
/// character on its own, one for the rest — per grapheme cluster (`Character`), so that a
/// letter with its accents, a flag or a family emoji joined by ZWJ counts once.
///
/// A small table of ranges (after Unicode's EastAsianWidth.txt and the Emoji_Presentation
/// property, unassigned gaps merged), not ICU: shopctl needs tables that line up, not a
/// typesetter. Pure.
enum DisplayWidth {
    /// The columns `text` takes.
    static func columns(of text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + columns(of: $1) }
    }

    /// The columns one grapheme cluster takes: decided by its first scalar, except that a
    /// variation selector asks for emoji (U+FE0F, two columns) or text (U+FE0E, one).
    static func columns(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if scalars.contains(emojiSelector) { return 2 }
        if scalars.contains(textSelector) { return 1 }
        if contains(wide, first.value) { return 2 }
        if first.value < 0x20 || (0x7F..<0xA0).contains(first.value) || contains(zero, first.value) { return 0 }
        return 1
    }

    /// `text` cut to at most `limit` columns, ending in "…" when something was cut; `text`
    /// itself when it fits (or when `limit` leaves no room for anything but the ellipsis).
    static func truncate(_ text: String, to limit: Int) -> String {
        guard limit > 1, columns(of: text) > limit else { return text }
        var result = ""
        var used = 0
        for character in text {
            let next = columns(of: character)
            if used + next > limit - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }

    /// VARIATION SELECTOR-16: the emoji presentation of the character before it.
    private static let emojiSelector: Unicode.Scalar = "\u{FE0F}"
    /// VARIATION SELECTOR-15: the text presentation of the character before it.
    private static let textSelector: Unicode.Scalar = "\u{FE0E}"

    /// Whether the sorted, disjoint `ranges` hold `value` (binary search).
    private static func contains(_ ranges: [ClosedRange<UInt32>], _ value: UInt32) -> Bool {
        var low = 0
        var high = ranges.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if value < ranges[middle].lowerBound {
                high = middle - 1
            } else if value > ranges[middle].upperBound {
                low = middle + 1
            } else {
                return true
            }
        }
        return false
    }

    /// Scalars drawn two columns wide: East Asian Wide and Fullwidth (Hangul, CJK, kana,
    /// fullwidth forms) and Emoji_Presentation, sorted. Regional indicators are here because
    /// they come in pairs that make one two-column flag.
    static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0, 0x23F3...0x23F3,
        0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F...0x267F, 0x2693...0x2693, 0x26A1...0x26A1,
        0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5, 0x26CE...0x26CE, 0x26D4...0x26D4, 0x26EA...0x26EA,
        0x26F2...0x26F3, 0x26F5...0x26F5, 0x26FA...0x26FA, 0x26FD...0x26FD, 0x2705...0x2705, 0x270A...0x270B,
        0x2728...0x2728, 0x274C...0x274C, 0x274E...0x274E, 0x2753...0x2755, 0x2757...0x2757, 0x2795...0x2797,
        0x27B0...0x27B0, 0x27BF...0x27BF, 0x2B1B...0x2B1C, 0x2B50...0x2B50, 0x2B55...0x2B55,
        0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F,
        0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
        0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF,
        0x1F004...0x1F004, 0x1F0CF...0x1F0CF, 0x1F18E...0x1F18E, 0x1F191...0x1F19A, 0x1F1E6...0x1F202,
        0x1F210...0x1F23B, 0x1F240...0x1F248, 0x1F250...0x1F251, 0x1F260...0x1F265,
        0x1F300...0x1F320, 0x1F32D...0x1F335, 0x1F337...0x1F37C, 0x1F37E...0x1F393, 0x1F3A0...0x1F3CA,
        0x1F3CF...0x1F3D3, 0x1F3E0...0x1F3F0, 0x1F3F4...0x1F3F4, 0x1F3F8...0x1F43E, 0x1F440...0x1F440,
        0x1F442...0x1F4FC, 0x1F4FF...0x1F53D, 0x1F54B...0x1F54E, 0x1F550...0x1F567, 0x1F57A...0x1F57A,
        0x1F595...0x1F596, 0x1F5A4...0x1F5A4, 0x1F5FB...0x1F64F, 0x1F680...0x1F6C5, 0x1F6CC...0x1F6CC,
        0x1F6D0...0x1F6D2, 0x1F6D5...0x1F6DF, 0x1F6EB...0x1F6EC, 0x1F6F4...0x1F6FC, 0x1F7E0...0x1F7F0,
        0x1F90C...0x1F93A, 0x1F93C...0x1F945, 0x1F947...0x1F9FF, 0x1FA70...0x1FAFF,
        0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    /// Scalars drawn with no width of their own when they begin a grapheme cluster: combining
    /// marks (elsewhere they are part of their base's cluster), zero-width and bidi format
    /// characters, variation selectors, the byte order mark. Sorted.
    static let zero: [ClosedRange<UInt32>] = [
        0x0300...0x036F, 0x0483...0x0489, 0x0591...0x05BD, 0x0610...0x061A, 0x064B...0x065F, 0x0E31...0x0E31,
        0x0E34...0x0E3A, 0x0E47...0x0E4E, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x200B...0x200F, 0x202A...0x202E,
        0x2060...0x2064, 0x20D0...0x20FF, 0xFE00...0xFE0F, 0xFE20...0xFE2F, 0xFEFF...0xFEFF, 0xE0100...0xE01EF,
    ]
}
