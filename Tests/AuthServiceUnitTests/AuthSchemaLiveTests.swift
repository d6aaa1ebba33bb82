@testable import auth_svc
import ServiceTestSupport
import Storage
import Testing

/// `AuthSchema`'s two histories describe one schema: the PostgreSQL migrations end with the
/// tables, columns and indexes, under the same names, that the SQLite migrations end with.
@Suite("AuthSchema: one schema in two dialects")
struct AuthSchemaLiveTests {
    /// A table's columns and the database's index names, as the store sees them.
    private struct Shape: Equatable, CustomStringConvertible {
        var columns: [String: Set<String>]
        var indexes: Set<String>
        var description: String { "columns \(columns.sorted { $0.key < $1.key }), indexes \(indexes.sorted())" }
    }

    /// The shape of a migrated SQLite database, without SQLite's own tables and implicit indexes.
    private func sqliteShape() async throws -> Shape {
        let database = try await Database(location: .sqlite(path: ":memory:"), migrations: AuthSchema.allMigrations)
        let shape = try await database.read { connection in
            let tables = try connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ).map { try $0.value(at: 0, as: String.self) }
            var columns: [String: Set<String>] = [:]
            for table in tables {
                columns[table] = Set(try connection.query("SELECT name FROM pragma_table_info(?)", [table]).map { try $0.value(at: 0) })
            }
            let indexes = try connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%'"
            ).map { try $0.value(at: 0, as: String.self) }
            return Shape(columns: columns, indexes: Set(indexes))
        }
        await database.close()
        return shape
    }

    /// The shape of the schema `auth` of a migrated PostgreSQL database, without the storage
    /// layer's version table, the feed's counter row and the primary keys' implicit indexes.
    private func postgreSQLShape(url: String) async throws -> Shape {
        let database = try await Database(location: .postgresql(url: url, schema: "auth"), migrations: AuthSchema.allMigrations)
        let shape = try await database.read { connection in
            let rows = try connection.query(
                """
                SELECT table_name, column_name FROM information_schema.columns
                WHERE table_schema = 'auth' AND table_name NOT IN ('storage_schema_version', 'revocation_sequence')
                """)
            var columns: [String: Set<String>] = [:]
            for row in rows { columns[try row.value(at: 0), default: []].insert(try row.value(at: 1)) }
            let indexes = try connection.query(
                "SELECT indexname FROM pg_indexes WHERE schemaname = 'auth' AND indexname NOT LIKE '%_pkey'"
            ).map { try $0.value(at: 0, as: String.self) }
            return Shape(columns: columns, indexes: Set(indexes))
        }
        await database.close()
        return shape
    }

    @Test("the PostgreSQL migrations end with the SQLite migrations' tables, columns and indexes")
    func sameTablesColumnsAndIndexes() async throws {
        let sqlite = try await sqliteShape()
        let postgreSQL = try await PostgreSQLServer.withDatabase { url in try await postgreSQLShape(url: url) }
        #expect(!sqlite.columns.isEmpty)
        #expect(postgreSQL == sqlite)
    }
}
