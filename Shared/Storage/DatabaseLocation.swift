/// Where a service's database is: a SQLite file (the embedded default), or a schema of its own
/// in a PostgreSQL database that its replicas — and the other services, each in their own
/// schema — share.
package enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// A SQLite database file (or `":memory:"`).
    case sqlite(path: String)
    /// The schema `schema` of the PostgreSQL database at `url` (`postgres://user@host:port/db`,
    /// or libpq's `key=value` form). `password`, when given, overrides the URL's and libpq's
    /// own sources (`PGPASSWORD`, `~/.pgpass`).
    case postgresql(url: String, schema: String, password: String? = nil)

    /// The SQL dialect spoken there.
    package var dialect: SQLDialect {
        switch self {
        case .sqlite: .sqlite
        case .postgresql: .postgresql
        }
    }

    /// The location for logs and messages: the path, or the URL with any password replaced by
    /// `***`, and the schema. Never a password.
    package var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgresql(let url, let schema, _): "\(Self.redacting(url)) (schema \(schema))"
        }
    }

    /// `url` with the password of its user-information part (`user:secret@`) or a
    /// `password=` parameter replaced by `***`.
    package static func redacting(_ url: String) -> String {
        var text = url
        if let scheme = text.firstRange(of: "://") {
            let authorityEnd = text[scheme.upperBound...].firstIndex(where: { $0 == "/" || $0 == "?" }) ?? text.endIndex
            if let at = text[scheme.upperBound..<authorityEnd].lastIndex(of: "@"),
                let colon = text[scheme.upperBound..<at].firstIndex(of: ":")
            {
                text.replaceSubrange(text.index(after: colon)..<at, with: "***")
            }
        }
        // password=… as a URL query parameter or a key=value pair.
        var output = ""
        var rest = Substring(text)
        while let found = rest.firstRange(of: "password=") {
            output += rest[..<found.upperBound]
            output += "***"
            rest = rest[found.upperBound...]
            rest = rest.drop(while: { $0 != "&" && $0 != " " })
        }
        return output + rest
    }
}

extension DatabaseLocation {
    /// A service's database as its flags give it: the schema `schema` of the PostgreSQL
    /// database at `url` when there is one, else the SQLite file at `sqlitePath`.
    package init(url: String?, password: String?, schema: String, sqlitePath: String) {
        if let url {
            self = .postgresql(url: url, schema: schema, password: password)
        } else {
            self = .sqlite(path: sqlitePath)
        }
    }
}
