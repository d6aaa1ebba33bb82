import Foundation
import PostgreSQL
import ServiceTestSupport
import Testing

/// `PostgreSQLConnection` against a real PostgreSQL server, in a database of its own for each
/// test (``PostgreSQLServer``): statements with parameters, NULLs and text as the server keeps them,
/// errors with their SQLSTATE, transactions.
@Suite("PostgreSQL connection, live")
struct PostgreSQLConnectionLiveTests {
    @Test("parameters travel apart from the SQL: NULL, unicode and quotes come back as they went")
    func parametersRoundTrip() async throws {
        try await PostgreSQLServer.withDatabase { url in
            let connection = try PostgreSQLConnection(url: url)
            try connection.execute("CREATE TABLE notes (id bigserial PRIMARY KEY, body text, tag text)")
            let awkward = "Robert'); DROP TABLE notes; -- ✓ 世界"
            let inserted = try connection.execute(
                "INSERT INTO notes (body, tag) VALUES ($1, $2), ($3, $4) RETURNING id", [awkward, nil, "plain", "t"])
            #expect(inserted.rows.count == 2 && inserted.affected == 2)
            let rows = try connection.execute("SELECT body, tag FROM notes ORDER BY id")
            #expect(rows.columns == ["body", "tag"])
            #expect(rows.rows == [[awkward, nil], ["plain", "t"]])
            #expect(rows.value("body", row: 1) == "plain")
            #expect(try connection.execute("SELECT count(*) AS n FROM notes").value("n") == "2")
        }
    }

    @Test("a unique violation, a syntax error and a missing table carry their SQLSTATE and message")
    func errorsCarrySQLState() async throws {
        try await PostgreSQLServer.withDatabase { url in
            let connection = try PostgreSQLConnection(url: url)
            try connection.execute("CREATE TABLE keys (key text PRIMARY KEY)")
            try connection.execute("INSERT INTO keys VALUES ($1)", ["k"])
            let duplicate = #expect(throws: PostgreSQLError.self) { try connection.execute("INSERT INTO keys VALUES ($1)", ["k"]) }
            #expect(duplicate?.sqlState == "23505" && duplicate?.isUniqueViolation == true)
            #expect(duplicate?.detail?.contains("(key)=(k)") == true)
            let syntax = #expect(throws: PostgreSQLError.self) { try connection.execute("SELEC 1") }
            #expect(syntax?.sqlState == "42601")
            let missing = #expect(throws: PostgreSQLError.self) { try connection.execute("SELECT * FROM nowhere") }
            #expect(missing?.sqlState == "42P01")
            #expect(missing?.message.contains("nowhere") == true)
            // The connection serves on after each refusal.
            #expect(try connection.execute("SELECT 1 AS one").value("one") == "1")
            #expect(connection.isOpen)
        }
    }

    @Test("a transaction commits when its body returns and rolls back when it throws")
    func transactions() async throws {
        try await PostgreSQLServer.withDatabase { url in
            let connection = try PostgreSQLConnection(url: url)
            try connection.execute("CREATE TABLE stock (id int PRIMARY KEY, count int NOT NULL CHECK (count >= 0))")
            try connection.execute("INSERT INTO stock VALUES (1, 5)")
            try connection.transaction(isolation: .serializable) { try $0.execute("UPDATE stock SET count = count - 2 WHERE id = 1") }
            #expect(try connection.execute("SELECT count FROM stock").value("count") == "3")
            #expect(throws: PostgreSQLError.self) {
                try connection.transaction { transaction in
                    try transaction.execute("UPDATE stock SET count = count - 1 WHERE id = 1")
                    try transaction.execute("UPDATE stock SET count = count - 9 WHERE id = 1")  // violates the check
                }
            }
            #expect(try connection.execute("SELECT count FROM stock").value("count") == "3")
        }
    }

    @Test("a server that is not there, or a database that is not, is a clear error")
    func connectionFailures() async throws {
        let refused = #expect(throws: PostgreSQLError.self) { try PostgreSQLConnection(url: "postgres://storefront@127.0.0.1:1/postgres?connect_timeout=2") }
        #expect(refused?.sqlState == nil)
        #expect(refused?.message.localizedCaseInsensitiveContains("refused") == true || refused?.message.contains("connect") == true, "\(String(describing: refused))")
        try await PostgreSQLServer.withDatabase { url in
            let unknown = #expect(throws: PostgreSQLError.self) {
                try PostgreSQLConnection(url: PostgreSQLServer.databaseURL(url, database: "no_such_database"))
            }
            #expect(unknown?.message.contains("no_such_database") == true, "\(String(describing: unknown))")
        }
    }
}
