import Dispatch
import Storage
import Testing

/// Opening, configuration, readers, the statement cache and closing.
@Suite("Database")
struct DatabaseTests {
    @Test("a file database runs in WAL mode with foreign keys on and the chosen synchronous level",
          arguments: [(DatabaseOptions.Synchronous.full, 2), (.normal, 1)])
    func pragmas(synchronous: DatabaseOptions.Synchronous, expected: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await Database(
            path: directory.file("app.sqlite"), options: DatabaseOptions(synchronous: synchronous), migrations: [])
        let (mode, level, foreignKeys) = try await database.write { connection in
            (
                try connection.queryValue("PRAGMA journal_mode", as: String.self),
                try connection.queryValue("PRAGMA synchronous", as: Int.self),
                try connection.queryValue("PRAGMA foreign_keys", as: Bool.self)
            )
        }
        #expect(mode == "wal")
        #expect(level == expected)
        #expect(foreignKeys == true)
        await database.close()
    }

    @Test("opening in a directory that does not exist throws a clear StorageError")
    func missingDirectory() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("no/such/dir/app.sqlite")
        let error = try await #require(throws: StorageError.self) {
            _ = try await Database(path: path, migrations: itemMigrations)
        }
        #expect(error.isCannotOpen)
        #expect(error.message.contains("does not exist"))
        #expect(error.message.contains(directory.file("no/such/dir")))
    }

    @Test("a cached statement's column names follow a schema change")
    func columnNamesAfterSchemaChange() async throws {
        // In memory: reads and writes share the one connection, so the same cached statement runs.
        let database = try await Database(path: ":memory:", migrations: itemMigrations)
        let read = { @Sendable (connection: Connection) in try connection.queryOne("SELECT * FROM counter")?.columnNames }
        #expect(try await database.read(read) == ["id", "value"])
        try await database.write { try $0.execute("ALTER TABLE counter ADD COLUMN note TEXT") }
        #expect(try await database.read(read) == ["id", "value", "note"])
        await database.close()
    }

    @Test("an in-memory database supports writes and reads")
    func inMemory() async throws {
        let database = try await Database(path: ":memory:", migrations: itemMigrations)
        let id = try await database.write { connection in
            try connection.execute("INSERT INTO items (name, payload) VALUES (?, ?)", ["memo", [UInt8]([1, 2])])
            return connection.lastInsertRowID
        }
        let row = try await database.read { try $0.queryOne("SELECT id, name, payload FROM items") }
        #expect(try row?.value(named: "id", as: Int64.self) == id)
        #expect(try row?.value(named: "name", as: String.self) == "memo")
        #expect(try row?.value(named: "payload", as: [UInt8].self) == [1, 2])
        await database.close()
    }

    @Test("a read cannot write", arguments: [":memory:", "file"])
    func readsAreReadOnly(kind: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await Database(
            path: kind == "file" ? directory.file("app.sqlite") : kind, migrations: itemMigrations)
        let error = try await #require(throws: StorageError.self) {
            try await database.read { try $0.execute("INSERT INTO items (name) VALUES ('sneaky')") }
        }
        #expect(error.isReadOnly)
        // The writer is not left in query-only mode.
        try await database.write { try $0.execute("INSERT INTO items (name) VALUES ('allowed')") }
        #expect(try await database.itemNames() == ["allowed"])
        await database.close()
    }

    @Test("readers see committed data, each read on one snapshot")
    func readersSeeCommittedData() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await Database(path: directory.file("app.sqlite"), migrations: itemMigrations)
        try await database.write { try $0.execute("INSERT INTO items (name) VALUES ('one')") }
        #expect(try await database.itemNames() == ["one"])

        // A read that began before a commit keeps its snapshot; the next read sees the commit.
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let proceed = DispatchSemaphore(value: 0)
        async let counts = database.read { connection in
            let before = try connection.queryValue("SELECT count(*) FROM items", as: Int.self)
            startedContinuation.yield()
            proceed.wait()  // Blocks the reader thread only, never the cooperative pool.
            let after = try connection.queryValue("SELECT count(*) FROM items", as: Int.self)
            return (before, after)
        }
        for await _ in started { break }
        try await database.write { try $0.execute("INSERT INTO items (name) VALUES ('two')") }
        proceed.signal()
        let (before, after) = try await counts
        #expect(before == 1)
        #expect(after == 1)
        #expect(try await database.itemNames() == ["one", "two"])
        await database.close()
    }

    @Test("the same SQL twice uses the cached statement")
    func statementCache() async throws {
        let database = try await Database(path: ":memory:", migrations: itemMigrations)
        let (compiled, cached) = try await database.write { connection in
            let before = connection.preparedStatementCount
            for name in ["a", "b", "c"] {
                try connection.execute("INSERT INTO items (name) VALUES (?)", [name])
            }
            _ = try connection.query("SELECT name FROM items")
            _ = try connection.query("SELECT name FROM items")
            return (connection.preparedStatementCount - before, connection.cachedStatementCount)
        }
        #expect(compiled == 2)
        #expect(cached >= 2)
        await database.close()
    }

    @Test("the statement cache evicts beyond its capacity, and capacity 0 disables it", arguments: [0, 2])
    func statementCacheCapacity(capacity: Int) async throws {
        let options = DatabaseOptions(statementCacheCapacity: capacity)
        let database = try await Database(path: ":memory:", options: options, migrations: itemMigrations)
        let (compiled, cached) = try await database.write { connection in
            let before = connection.preparedStatementCount
            for _ in 0..<2 {
                for sql in ["SELECT 1", "SELECT 2", "SELECT 3"] {
                    _ = try connection.query(sql)
                }
            }
            return (connection.preparedStatementCount - before, connection.cachedStatementCount)
        }
        #expect(compiled == 6)
        #expect(cached <= capacity)
        await database.close()
    }

    @Test("several statements in one execute are refused; executeScript runs them")
    func oneStatementAtATime() async throws {
        let database = try await Database(path: ":memory:", migrations: itemMigrations)
        let error = try await #require(throws: StorageError.self) {
            try await database.write { try $0.execute("INSERT INTO items (name) VALUES ('x'); DELETE FROM items") }
        }
        #expect(error.isMisuse)
        try await database.write { try $0.execute("INSERT INTO items (name) VALUES ('x') -- a trailing comment") }
        try await database.write { connection in
            try connection.executeScript("INSERT INTO items (name) VALUES ('y'); INSERT INTO items (name) VALUES ('z');")
        }
        #expect(try await database.itemNames() == ["x", "y", "z"])
        await database.close()
    }

    @Test("after close, reads and writes throw StorageError with isMisuse")
    func closedDatabase() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await Database(path: directory.file("app.sqlite"), migrations: itemMigrations)
        await database.close()
        await database.close()
        let writeError = try await #require(throws: StorageError.self) {
            try await database.write { try $0.execute("INSERT INTO items (name) VALUES ('late')") }
        }
        #expect(writeError.isMisuse)
        let readError = try await #require(throws: StorageError.self) {
            try await database.read { try $0.query("SELECT * FROM items") }
        }
        #expect(readError.isMisuse)
        // Closing the last connection checkpointed and removed the WAL.
        #expect(directory.sizeOfFile("app.sqlite-wal") == 0)
    }
}
