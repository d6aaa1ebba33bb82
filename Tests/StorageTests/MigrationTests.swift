import Storage
import Testing

/// Numbered migrations on `PRAGMA user_version`.
@Suite("Migrations")
struct MigrationTests {
    /// Three steps that record their number in `log`; the first `count` of them.
    private func loggingMigrations(_ count: Int) -> [Migration] {
        let all = [
            Migration("create log", sql: "CREATE TABLE log (step INTEGER NOT NULL); INSERT INTO log VALUES (1);"),
            Migration("log two", sql: "INSERT INTO log VALUES (2)"),
            Migration("log three") { connection in try connection.execute("INSERT INTO log VALUES (?)", [3]) },
        ]
        return Array(all.prefix(count))
    }

    private func state(of database: Database) async throws -> (version: Int, steps: [Int]) {
        try await database.read { connection in
            let steps = try connection.query("SELECT step FROM log ORDER BY rowid").map { try $0.value(at: 0, as: Int.self) }
            return (try connection.schemaVersion(), steps)
        }
    }

    @Test("migrations apply once and in order, and reopening applies only the new ones")
    func reopeningAppliesOnlyNewSteps() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("app.sqlite")

        let first = try await Database(path: path, migrations: loggingMigrations(2))
        let afterFirst = try await state(of: first)
        #expect(afterFirst.version == 2)
        #expect(afterFirst.steps == [1, 2])
        await first.close()

        let second = try await Database(path: path, migrations: loggingMigrations(3))
        let afterSecond = try await state(of: second)
        #expect(afterSecond.version == 3)
        #expect(afterSecond.steps == [1, 2, 3])
        await second.close()

        let third = try await Database(path: path, migrations: loggingMigrations(3))
        let afterThird = try await state(of: third)
        #expect(afterThird.version == 3)
        #expect(afterThird.steps == [1, 2, 3])
        await third.close()
    }

    @Test("a code migration runs exactly once across reopenings")
    func codeMigrationRunsOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let runs = SharedCounter()
        let migrations = [
            Migration("create t", sql: "CREATE TABLE t (x INTEGER)"),
            Migration("count runs") { _ in runs.add(1) },
        ]
        for _ in 0..<3 {
            let database = try await Database(path: directory.file("app.sqlite"), migrations: migrations)
            await database.close()
        }
        #expect(runs.value == 1)
    }

    @Test("a failing migration rolls back whole and names the step")
    func failingMigrationRollsBack() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("app.sqlite")
        let good = Migration("create t", sql: "CREATE TABLE t (x INTEGER)")
        let bad = Migration("half done", sql: "INSERT INTO t VALUES (1); INSERT INTO missing VALUES (1);")

        let error = try await #require(throws: StorageError.self) {
            _ = try await Database(path: path, migrations: [good, bad])
        }
        #expect(error.message.contains("migration 2 (half done)"))
        #expect(error.message.contains("no such table: missing"))

        let database = try await Database(path: path, migrations: [good])
        let (version, rows) = try await database.read { connection in
            (try connection.schemaVersion(), try connection.queryValue("SELECT count(*) FROM t", as: Int.self))
        }
        #expect(version == 1)
        #expect(rows == 0)
        await database.close()
    }

    @Test("a database newer than the program's migrations is refused")
    func newerDatabaseIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("app.sqlite")
        let database = try await Database(path: path, migrations: loggingMigrations(3))
        await database.close()

        let error = try await #require(throws: StorageError.self) {
            _ = try await Database(path: path, migrations: self.loggingMigrations(2))
        }
        #expect(error.message.contains("schema version 3"))
    }

    @Test("an in-memory database is migrated from scratch each time")
    func inMemoryDatabaseMigrates() async throws {
        let database = try await Database(path: ":memory:", migrations: loggingMigrations(3))
        let state = try await state(of: database)
        #expect(state.version == 3)
        #expect(state.steps == [1, 2, 3])
        await database.close()
    }
}
