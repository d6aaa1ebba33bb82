import PostgreSQL
import ServiceTestSupport
@testable import Storage
import Telemetry
import Testing

/// What a `Database` given a `MetricsRegistry` records (`StorageMetrics`): statements by
/// label, transactions by kind, commits, pool waits, the WAL's size on SQLite and the pool's
/// state on PostgreSQL — read back from the registry's exposition text, as a scraper sees it.
@Suite("Storage metrics")
struct StorageMetricsTests {
    @Test(
        "a statement's label is its verb and the table it acts on, read from the SQL",
        arguments: [
            ("SELECT name FROM items ORDER BY id", "select items"),
            ("select count(*) from users where id > ?", "select users"),
            ("INSERT INTO orders (id, total) VALUES (?, ?)", "insert orders"),
            ("INSERT OR IGNORE INTO basket_items (id) VALUES (?)", "insert basket_items"),
            ("UPDATE basket_items SET count = ? WHERE id = ?", "update basket_items"),
            ("UPDATE OR REPLACE counter SET value = 1", "update counter"),
            ("DELETE FROM sessions WHERE id = ?", "delete sessions"),
            ("SELECT * FROM (SELECT id, title FROM products p WHERE p.price > ?) AS listing ORDER BY id", "select products"),
            ("SELECT extract(epoch FROM created_at) FROM orders", "select orders"),
            ("SELECT (SELECT max(id) FROM a) FROM b", "select b"),
            ("SELECT EXISTS (SELECT 1 FROM reservations WHERE id = ?)", "select reservations"),
            (
                "WITH next AS (UPDATE revocation_sequence SET last = last + 1 RETURNING last)\n"
                    + "INSERT INTO revocations (sequence) SELECT last FROM next", "insert revocations"
            ),
            ("  -- FROM nowhere\n /* FROM here */ SELECT 'FROM quoted', a FROM \"Order\"", "select Order"),
            ("SELECT 1", "select"),
            ("PRAGMA query_only = ON", "pragma"),
        ])
    func statementLabel(sql: String, label: String) {
        #expect(StatementLabel.of(sql) == label)
    }

    @Test("transaction control has no statement label", arguments: ["BEGIN IMMEDIATE", "commit", "ROLLBACK", "SAVEPOINT s", "RELEASE SAVEPOINT s"])
    func transactionControlIsNotAStatement(sql: String) {
        #expect(StatementLabel.of(sql) == nil)
    }

    @Test("a SQLite file database records its statements, transactions, commits, pool waits and WAL size")
    func sqliteFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let registry = MetricsRegistry()
        let database = try await Database(
            path: directory.file("app.sqlite"), options: DatabaseOptions(synchronous: .full, metrics: registry),
            migrations: itemMigrations)
        let opened = Exposition(registry)
        for name in ["a", "b", "c"] {
            try await database.write { try $0.execute("INSERT INTO items (name) VALUES (?)", [name]) }
        }
        await #expect(throws: StorageError.self) {
            try await database.write { try $0.execute("INSERT INTO items (name) VALUES (?)", ["a"]) }
        }
        #expect(try await database.itemNames() == ["a", "b", "c"])
        #expect(try await database.itemNames().count == 3)

        let now = Exposition(registry)
        #expect(now.value(#"storage_query_duration_seconds_count{statement="insert items"}"#) == 4)
        #expect(now.value(#"storage_query_duration_seconds_count{statement="select items"}"#) == 2)
        #expect(!now.text.contains(#"statement="begin"#) && !now.text.contains(#"statement="commit"#))
        // The duplicate rolled back: four write transactions, three commits.
        #expect(now.increase(#"storage_transaction_duration_seconds_count{kind="write"}"#, since: opened) == 4)
        #expect(now.increase(#"storage_commits_total{synchronous="true"}"#, since: opened) == 3)
        #expect(now.value(#"storage_transaction_duration_seconds_count{kind="read"}"#) == 2)
        #expect(now.value(#"storage_pool_wait_seconds_count{kind="reader"}"#) == 2)
        #expect(now.increase(#"storage_pool_wait_seconds_count{kind="writer"}"#, since: opened) == 4)
        #expect(try #require(now.value("storage_sqlite_wal_bytes")) > 0)
        #expect(now.value(#"storage_postgresql_connections{state="idle"}"#) == nil)
        #expect(now.value(#"storage_transaction_retries_total{reason="serialization"}"#) == 0)
        await database.close()
    }

    @Test("an in-memory database reads through its writer and counts its commits as not waiting for a disk")
    func sqliteInMemory() async throws {
        let registry = MetricsRegistry()
        let database = try await Database(
            path: ":memory:", options: DatabaseOptions(synchronous: .full, metrics: registry), migrations: itemMigrations)
        let opened = Exposition(registry)
        try await database.write { try $0.execute("UPDATE counter SET value = value + 1") }
        #expect(try await database.read { try $0.queryValue("SELECT value FROM counter", as: Int.self) } == 1)
        let now = Exposition(registry)
        #expect(now.increase(#"storage_commits_total{synchronous="false"}"#, since: opened) == 1)
        #expect(now.value(#"storage_commits_total{synchronous="true"}"#) == nil)
        #expect(now.value(#"storage_query_duration_seconds_count{statement="update counter"}"#) == 1)
        #expect(now.value(#"storage_query_duration_seconds_count{statement="select counter"}"#) == 1)
        #expect(now.increase(#"storage_pool_wait_seconds_count{kind="writer"}"#, since: opened) == 2)
        #expect(now.value(#"storage_pool_wait_seconds_count{kind="reader"}"#) == nil)
        #expect(now.value("storage_sqlite_wal_bytes") == nil)
        await database.close()
    }

    @Test("a database opened without a registry records nothing, in any registry")
    func withoutMetrics() async throws {
        #expect(DatabaseOptions().metrics == nil)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let registry = MetricsRegistry()
        let recorded = try await Database(
            path: directory.file("recorded.sqlite"), options: DatabaseOptions(metrics: registry), migrations: itemMigrations)
        let before = registry.exposition()
        let unrecorded = try await Database(path: directory.file("unrecorded.sqlite"), migrations: itemMigrations)
        try await unrecorded.write { try $0.execute("INSERT INTO items (name) VALUES (?)", ["x"]) }
        #expect(try await unrecorded.itemNames() == ["x"])
        #expect(registry.exposition() == before)
        await unrecorded.close()
        await recorded.close()
    }
}

/// `StorageMetrics` on PostgreSQL, against a real server: the same series, and the pool's
/// connections by state and the transactions run again after a lost connection.
@Suite("Storage metrics on PostgreSQL, live")
struct StorageMetricsPostgreSQLLiveTests {
    /// The schema `app` of the database at `url`, with one table `items (id, name UNIQUE)`,
    /// recording into `registry` with one connection per `connections`.
    private func open(_ url: String, registry: MetricsRegistry, connections: Int) async throws -> Database {
        try await Database(
            location: .postgresql(url: url, schema: "app"),
            options: DatabaseOptions(synchronous: .full, postgreSQLConnectionCount: connections, metrics: registry),
            migrations: Migrations(sqlite: [], postgresql: [
                Migration(
                    "create items",
                    sql: "CREATE TABLE items (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name text NOT NULL UNIQUE)")
            ]))
    }

    @Test("statements, transactions, commits, pool waits and the pool's idle connections")
    func recordsStatementsAndPool() async throws {
        try await PostgreSQLServer.withDatabase { url in
            let registry = MetricsRegistry()
            let database = try await open(url, registry: registry, connections: 2)
            let opened = Exposition(registry)
            for name in ["a", "b", "c"] {
                try await database.write { try $0.execute("INSERT INTO items (name) VALUES (?)", [name]) }
            }
            for _ in 0..<2 {
                #expect(try await database.read { try $0.queryValue("SELECT count(*) FROM items", as: Int.self) } == 3)
            }
            let now = Exposition(registry)
            #expect(now.value(#"storage_query_duration_seconds_count{statement="insert items"}"#) == 3)
            #expect(now.value(#"storage_query_duration_seconds_count{statement="select items"}"#) == 2)
            #expect(now.increase(#"storage_commits_total{synchronous="true"}"#, since: opened) == 3)
            #expect(now.increase(#"storage_transaction_duration_seconds_count{kind="write"}"#, since: opened) == 3)
            #expect(now.value(#"storage_transaction_duration_seconds_count{kind="read"}"#) == 2)
            #expect(now.increase(#"storage_pool_wait_seconds_count{kind="postgresql"}"#, since: opened) == 5)
            #expect(now.value(#"storage_postgresql_connections{state="idle"}"#) == 2)
            #expect(now.value(#"storage_postgresql_connections{state="busy"}"#) == 0)
            #expect(now.value(#"storage_postgresql_connections{state="broken"}"#) == 0)
            #expect(now.value("storage_sqlite_wal_bytes") == nil)
            await database.close()
            #expect(Exposition(registry).value(#"storage_postgresql_connections{state="idle"}"#) == 0)
        }
    }

    @Test("a connection lost in a write counts broken until a retried read reopens it")
    func lostConnection() async throws {
        try await PostgreSQLServer.withDatabase { url in
            let registry = MetricsRegistry()
            let database = try await open(url, registry: registry, connections: 1)
            let opened = Exposition(registry)
            // The server ends the connection inside the transaction: a write is not run again.
            await #expect(throws: StorageError.self) {
                try await database.write { try $0.execute("SELECT pg_terminate_backend(pg_backend_pid())") }
            }
            let lost = Exposition(registry)
            #expect(lost.value(#"storage_postgresql_connections{state="broken"}"#) == 1)
            #expect(lost.value(#"storage_postgresql_connections{state="idle"}"#) == 0)
            #expect(lost.increase(#"storage_commits_total{synchronous="true"}"#, since: opened) == 0)
            #expect(lost.increase(#"storage_transaction_duration_seconds_count{kind="write"}"#, since: opened) == 1)
            #expect(try await database.read { try $0.queryValue("SELECT count(*) FROM items", as: Int.self) } == 0)
            // The server ends it between transactions: the next read fails at BEGIN and is run again.
            let admin = try PostgreSQLConnection(url: url)
            try admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
            #expect(try await database.read { try $0.queryValue("SELECT count(*) FROM items", as: Int.self) } == 0)
            let now = Exposition(registry)
            #expect(now.value(#"storage_postgresql_connections{state="broken"}"#) == 0)
            #expect(now.value(#"storage_postgresql_connections{state="idle"}"#) == 1)
            #expect(now.value(#"storage_transaction_retries_total{reason="reconnection"}"#) == 1)
            await database.close()
        }
    }
}

/// A registry's exposition text at one moment, and its series' values.
private struct Exposition {
    /// The text, as `/metrics` serves it.
    let text: String

    /// Reads `registry` now.
    init(_ registry: MetricsRegistry) {
        text = registry.exposition()
    }

    /// The value of the series written exactly `series` (name and labels), or nil when the
    /// text has no such line.
    func value(_ series: String) -> Double? {
        MetricsScrape(exposition: text).value(series)
    }

    /// How much `series` grew from `earlier` (a series absent then counts from 0).
    func increase(_ series: String, since earlier: Exposition) -> Double? {
        value(series).map { $0 - (earlier.value(series) ?? 0) }
    }
}
