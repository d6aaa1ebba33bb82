public import ArgumentParser
internal import Foundation

/// `--database-url` and `--database-password-file`, the flags of every service that keeps
/// data: without a URL the service keeps a SQLite file in its data directory; with one, its
/// own schema in that PostgreSQL database, which its replicas share.
public struct DatabaseFlags: ParsableArguments {
    /// The PostgreSQL database, `postgres://user@host:port/database`; nil for SQLite.
    @Option(help: "PostgreSQL database to keep the data in, postgres://user@host:port/db; without it, SQLite in the data directory (env SHOP_DATABASE_URL). The password comes from PGPASSWORD, ~/.pgpass or --database-password-file, never from a flag.")
    public var databaseURL: String?

    /// A file holding the PostgreSQL password (its first line).
    @Option(help: "File whose first line is the PostgreSQL password (env SHOP_DATABASE_PASSWORD_FILE).")
    public var databasePasswordFile: String?

    public init() {}

    /// ``databaseURL``, else `SHOP_DATABASE_URL`; nil (SQLite) when neither is set.
    public var url: String? { databaseURL ?? Self.environment("SHOP_DATABASE_URL") }

    /// ``databasePasswordFile``, else `SHOP_DATABASE_PASSWORD_FILE`.
    public var passwordFile: String? { databasePasswordFile ?? Self.environment("SHOP_DATABASE_PASSWORD_FILE") }

    private static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    public mutating func validate() throws {
        if let databaseURL = url {
            guard databaseURL.hasPrefix("postgres://") || databaseURL.hasPrefix("postgresql://") else {
                throw ValidationError("--database-url must be a PostgreSQL URL, postgres://user@host:port/database.")
            }
            guard !Self.hasPassword(databaseURL) else {
                throw ValidationError("--database-url must not carry the password (it would show in the process list): put it in PGPASSWORD, ~/.pgpass or --database-password-file.")
            }
        }
        if passwordFile != nil {
            guard url != nil else { throw ValidationError("--database-password-file needs --database-url.") }
            _ = try password()
        }
    }

    /// The password read from ``passwordFile``; nil when none is given (libpq then reads
    /// `PGPASSWORD` or `~/.pgpass`).
    ///
    /// - Throws: `ValidationError` when the file cannot be read or is empty.
    public func password() throws -> String? {
        guard let databasePasswordFile = passwordFile else { return nil }
        guard let text = try? String(contentsOfFile: databasePasswordFile, encoding: .utf8) else {
            throw ValidationError("cannot read the database password file \(databasePasswordFile).")
        }
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let password = line.trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
        guard !password.isEmpty else { throw ValidationError("the database password file \(databasePasswordFile) is empty.") }
        return password
    }

    /// Whether `url`'s user-information part holds a password (`user:secret@`) or its query a
    /// `password=` parameter.
    static func hasPassword(_ url: String) -> Bool {
        guard let scheme = url.range(of: "://") else { return false }
        let rest = url[scheme.upperBound...]
        let authority = rest[..<(rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex)]
        if let at = authority.lastIndex(of: "@"), authority[..<at].contains(":") { return true }
        return url.contains("password=")
    }
}
