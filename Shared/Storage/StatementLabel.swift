/// The name a statement's durations are counted under in `storage_query_duration_seconds`:
/// its verb and the table it acts on, read from the SQL text — `select products`,
/// `insert orders`, `update basket_items`, `delete sessions` — or the verb alone when it names
/// no table (`select`, `pragma`).
///
/// The SQL comes from the stores' code, never from input (values travel as bindings), so the
/// labels are as few as the statements written; statements that differ only in their columns
/// or conditions share one. Computed once per prepared statement, kept with it.
enum StatementLabel {
    /// The label of `sql`, or nil for transaction control (`BEGIN`, `COMMIT`, `SAVEPOINT` …),
    /// which `storage_transaction_duration_seconds` and `storage_commits_total` count instead.
    static func of(_ sql: String) -> String? {
        let tokens = SQLTokens(sql).all
        guard let first = tokens.first?.word else { return "statement" }
        if transactionControl.contains(first) { return nil }
        // A common table expression (`WITH next AS (…) INSERT …`): the statement's verb is the
        // first one outside its parentheses.
        let verbIndex =
            first == "with"
            ? tokens.firstIndex { $0.depth == 0 && $0.word.map(verbs.contains) == true } ?? 0 : 0
        guard let verb = tokens[verbIndex].word else { return "statement" }
        let rest = tokens[(verbIndex + 1)...]
        guard let table = table(of: verb, in: rest) else { return verb }
        return verb + " " + table
    }

    /// The verbs whose table the label names.
    private static let verbs: Set<String> = ["select", "insert", "replace", "update", "delete"]

    /// The verbs of transaction control.
    private static let transactionControl: Set<String> = ["begin", "commit", "end", "rollback", "savepoint", "release"]

    /// The table `verb` acts on: the one after `INTO` for an insert, the one updated, the one
    /// deleted from, the first one a select reads (its subquery's when it reads from one).
    private static func table(of verb: String, in tokens: ArraySlice<SQLToken>) -> String? {
        switch verb {
        case "insert", "replace":
            return name(after: "into", in: tokens)
        case "update":
            // `UPDATE OR IGNORE t` (SQLite), `UPDATE ONLY t` (PostgreSQL).
            var rest = tokens
            if rest.first?.word == "or" { rest = rest.dropFirst(2) }
            if rest.first?.word == "only" { rest = rest.dropFirst() }
            return rest.first?.tableName
        case "delete", "select":
            return name(after: "from", in: tokens)
        default:
            return nil
        }
    }

    /// The table name after the first `keyword` standing at the depth of `tokens`' first token
    /// (not one inside a function's parentheses, as in `extract(epoch FROM t)`), looking into
    /// the parentheses of a subquery that follows it; else after the first `keyword` anywhere
    /// (`SELECT EXISTS (SELECT 1 FROM t)`).
    private static func name(after keyword: String, in tokens: ArraySlice<SQLToken>) -> String? {
        guard let depth = tokens.first?.depth else { return nil }
        var index = tokens.startIndex
        while let found = tokens[index...].firstIndex(where: { $0.depth == depth && $0.word == keyword }) {
            var next = found + 1
            if next < tokens.endIndex && tokens[next].word == "only" { next += 1 }
            guard next < tokens.endIndex else { break }
            if let name = tokens[next].tableName { return name }
            if tokens[next].kind == .opening, let name = name(after: keyword, in: tokens[(next + 1)...]) { return name }
            index = next
        }
        return tokens.indices.lazy.filter { tokens[$0].word == keyword && $0 + 1 < tokens.endIndex }
            .compactMap { tokens[$0 + 1].tableName }.first
    }
}

/// One token of SQL text, as far as `StatementLabel` needs, with how deep in parentheses it
/// stands.
struct SQLToken {
    /// What the token is.
    enum Kind: Equatable {
        /// A keyword or unquoted name, lower-cased.
        case word(String)
        /// A quoted identifier (`"order"`), as written: always a name.
        case quoted(String)
        /// `(`.
        case opening
        /// `)`, or any other character outside words, literals and comments.
        case other
    }

    /// What the token is.
    let kind: Kind
    /// How many parentheses enclose the token (an opening one stands outside itself).
    let depth: Int

    /// The token as a keyword: an unquoted word; nil for anything else.
    var word: String? {
        if case .word(let word) = kind { return word }
        return nil
    }

    /// The token as a table name: a quoted identifier, or a word starting with a letter or `_`.
    var tableName: String? {
        switch kind {
        case .quoted(let name): return name
        case .word(let word):
            guard let first = word.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else { return nil }
            return word
        case .opening, .other: return nil
        }
    }
}

/// The tokens of SQL text: words (letters, digits, `_`, `$` and `.` for qualified names),
/// quoted identifiers, and single characters, skipping spaces, comments and string literals.
struct SQLTokens {
    /// Every token, in order.
    let all: [SQLToken]

    /// Splits `sql` into tokens.
    init(_ sql: String) {
        var tokens: [SQLToken] = []
        var depth = 0
        var characters = Array(sql.unicodeScalars)[...]
        while let character = characters.popFirst() {
            switch character {
            case _ where character.properties.isWhitespace:
                continue
            case "-" where characters.first == "-":
                characters = characters.drop(while: { $0 != "\n" })
            case "/" where characters.first == "*":
                characters = characters.dropFirst()
                while let inner = characters.popFirst(), !(inner == "*" && characters.first == "/") {}
                characters = characters.dropFirst()
            case "'":
                // A string literal; a doubled quote inside it starts a new literal right after.
                characters = characters.drop(while: { $0 != "'" }).dropFirst()
            case "\"":
                let name = characters.prefix(while: { $0 != "\"" })
                characters = characters.dropFirst(name.count + 1)
                tokens.append(SQLToken(kind: .quoted(String(String.UnicodeScalarView(name))), depth: depth))
            case "(":
                tokens.append(SQLToken(kind: .opening, depth: depth))
                depth += 1
            case ")":
                depth = max(0, depth - 1)
                tokens.append(SQLToken(kind: .other, depth: depth))
            case _ where Self.isWordCharacter(character):
                let rest = characters.prefix(while: Self.isWordCharacter)
                characters = characters.dropFirst(rest.count)
                let word = String(String.UnicodeScalarView([character] + rest)).lowercased()
                tokens.append(SQLToken(kind: .word(word), depth: depth))
            default:
                tokens.append(SQLToken(kind: .other, depth: depth))
            }
        }
        all = tokens
    }

    /// Whether `character` continues a word: a letter, a digit, `_`, `$`, or `.`.
    private static func isWordCharacter(_ character: Unicode.Scalar) -> Bool {
        character == "_" || character == "$" || character == "." || character.properties.isAlphabetic
            || ("0"..."9").contains(character)
    }
}
