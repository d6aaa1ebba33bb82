/// Values written into a command line that shopctl prints for the user to paste (the "More:"
/// line of a list), quoted so that a POSIX shell reads each back as exactly one word.
enum ShellWord {
    /// The characters a shell never treats specially, so a word made only of them needs no
    /// quotes (the set Python's `shlex.quote` uses).
    private static let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-".unicodeScalars)

    /// `text` as one shell word: unchanged when it is made of plain characters, else in single
    /// quotes, each `'` in it written as `'\''` (a single-quoted string cannot hold one:
    /// POSIX.1-2017 XCU 2.2.2). So `men's clothing` becomes `'men'\''s clothing'`.
    static func quoted(_ text: String) -> String {
        if !text.isEmpty && text.unicodeScalars.allSatisfy(plain.contains) { return text }
        // Scalar by scalar, not by Character: a quote followed by a combining mark is one
        // Character to Swift but still a quote to the shell.
        var word = "'"
        for scalar in text.unicodeScalars {
            if scalar == "'" { word += #"'\''"# } else { word.unicodeScalars.append(scalar) }
        }
        return word + "'"
    }
}
