import Storage
import Testing

/// Write transactions: errors, rollback and serialization.
@Suite("Transactions")
struct TransactionTests {
    @Test("a duplicate key maps to StorageError with isConstraintViolation", arguments: [":memory:", "file"])
    func uniqueViolation(kind: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await Database(
            path: kind == "file" ? directory.file("app.sqlite") : kind, migrations: itemMigrations)
        try await database.write { try $0.execute("INSERT INTO items (name) VALUES (?)", ["a"]) }

        let error = try await #require(throws: StorageError.self) {
            try await database.write { try $0.execute("INSERT INTO items (name) VALUES (?)", ["a"]) }
        }
        #expect(error.isConstraintViolation)
        #expect(error.isUniqueViolation)
        #expect(!error.isForeignKeyViolation)
        #expect(!error.isBusy)
        #expect(error.resultCode == 19)
        #expect(error.extendedResultCode == 2067)
        #expect(error.message.contains("UNIQUE constraint failed: items.name"))
        #expect(error.sql == "INSERT INTO items (name) VALUES (?)")
        await database.close()
    }

    @Test("foreign keys are enforced")
    func foreignKeyViolation() async throws {
        let database = try await Database(path: ":memory:", migrations: [
            Migration(
                "create parent and child",
                sql: """
                    CREATE TABLE parent (id INTEGER PRIMARY KEY);
                    CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent (id));
                    """)
        ])
        let error = try await #require(throws: StorageError.self) {
            try await database.write { try $0.execute("INSERT INTO child (parent_id) VALUES (?)", [99]) }
        }
        #expect(error.isConstraintViolation)
        #expect(error.isForeignKeyViolation)
        #expect(!error.isUniqueViolation)
        await database.close()
    }

    @Test("a throw inside write rolls the whole transaction back and is rethrown unchanged")
    func throwRollsBack() async throws {
        let database = try await Database(path: ":memory:", migrations: itemMigrations)
        await #expect(throws: DeliberateError()) {
            try await database.write { connection in
                try connection.execute("INSERT INTO items (name) VALUES (?)", ["lost"])
                try connection.execute("UPDATE counter SET value = 99")
                throw DeliberateError()
            }
        }
        #expect(try await database.itemNames() == [])
        let counter = try await database.read { try $0.queryValue("SELECT value FROM counter", as: Int.self) }
        #expect(counter == 0)

        // A constraint error after a successful statement also undoes that statement.
        try await database.write { try $0.execute("INSERT INTO items (name) VALUES (?)", ["kept"]) }
        await #expect(throws: StorageError.self) {
            try await database.write { connection in
                try connection.execute("INSERT INTO items (name) VALUES (?)", ["also lost"])
                try connection.execute("INSERT INTO items (name) VALUES (?)", ["kept"])
            }
        }
        #expect(try await database.itemNames() == ["kept"])

        // The writer is usable again afterwards.
        try await database.write { try $0.execute("INSERT INTO items (name) VALUES (?)", ["after"]) }
        #expect(try await database.itemNames() == ["kept", "after"])
        await database.close()
    }

    @Test("a savepoint undoes only its own part of a transaction")
    func savepointRollsBackPartially() async throws {
        let database = try await Database(path: ":memory:", migrations: itemMigrations)
        let inserted = try await database.write { connection in
            try connection.execute("INSERT INTO items (name) VALUES (?)", ["first"])
            var inserted = 1
            for name in ["first", "second"] {
                do {
                    try connection.savepoint { try $0.execute("INSERT INTO items (name) VALUES (?)", [name]) }
                    inserted += 1
                } catch let error as StorageError where error.isUniqueViolation {
                    continue
                }
            }
            return inserted
        }
        #expect(inserted == 2)
        #expect(try await database.itemNames() == ["first", "second"])
        await database.close()
    }

    @Test("concurrent writes from many tasks run one at a time and all land")
    func concurrentWritesAreSerialized() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await Database(path: directory.file("app.sqlite"), migrations: itemMigrations)
        let inside = SharedCounter()
        let overlaps = SharedCounter()
        let writers = 200

        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<writers {
                group.addTask {
                    try await database.write { connection in
                        if inside.add(1) != 1 { overlaps.add(1) }
                        defer { inside.add(-1) }
                        // Read, then write what was read: lost updates would show in the total.
                        let value = try #require(try connection.queryValue("SELECT value FROM counter", as: Int.self))
                        try connection.execute("UPDATE counter SET value = ?", [value + 1])
                        try connection.execute("INSERT INTO items (name) VALUES (?)", ["item \(index)"])
                    }
                }
            }
            try await group.waitForAll()
        }

        #expect(overlaps.value == 0)
        let (counter, items) = try await database.read { connection in
            (
                try connection.queryValue("SELECT value FROM counter", as: Int.self),
                try connection.queryValue("SELECT count(*) FROM items", as: Int.self)
            )
        }
        #expect(counter == writers)
        #expect(items == writers)
        await database.close()
    }
}
