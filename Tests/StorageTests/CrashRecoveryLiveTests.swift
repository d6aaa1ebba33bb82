import Foundation
import Storage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Crash safety: what a process killed in the middle of a write transaction leaves behind.
@Suite("Crash recovery")
struct CrashRecoveryLiveTests {
    @Test(
        "a writer killed mid-transaction leaves an intact database with every committed row and no uncommitted one",
        .enabled(if: FileManager.default.isExecutableFile(atPath: SQLiteShell.executable)))
    func killedWriter() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("crash.sqlite")

        // Rows committed through our Database.
        let database = try await Database(path: path, migrations: itemMigrations)
        try await database.write { connection in
            for number in 1...3 {
                try connection.execute("INSERT INTO items (name) VALUES (?)", ["ours \(number)"])
            }
        }
        await database.close()

        // A second process commits one row, then opens a transaction and writes enough to spill
        // uncommitted pages into the WAL file (a tiny page cache forces it), and stays there.
        let shell = try SQLiteShell(path: path)
        try shell.send(
            """
            PRAGMA journal_mode = WAL;
            INSERT INTO items (name) VALUES ('theirs, committed');
            PRAGMA cache_size = 10;
            BEGIN IMMEDIATE;
            INSERT INTO items (name) VALUES ('theirs, uncommitted');
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
                INSERT INTO items (name, payload) SELECT 'bulk ' || i, randomblob(2000) FROM n;
            UPDATE counter SET value = 12345;
            SELECT 'ready';
            """)
        try await shell.waitForLine("ready")
        #expect(directory.sizeOfFile("crash.sqlite-wal") > 500 * 2000, "uncommitted frames are on disk")

        let signal = await shell.kill()
        #expect(signal == SIGKILL)

        // Reopening recovers from the WAL: committed frames kept, the open transaction gone.
        let reopened = try await Database(path: path, migrations: itemMigrations)
        let (integrity, counter) = try await reopened.read { connection in
            (
                try connection.queryValue("PRAGMA integrity_check", as: String.self),
                try connection.queryValue("SELECT value FROM counter", as: Int.self)
            )
        }
        #expect(integrity == "ok")
        #expect(counter == 0)
        #expect(try await reopened.itemNames() == ["ours 1", "ours 2", "ours 3", "theirs, committed"])

        // And it takes writes again: the dead process's lock is gone.
        try await reopened.write { try $0.execute("INSERT INTO items (name) VALUES ('after the crash')") }
        #expect(try await reopened.itemNames().last == "after the crash")
        await reopened.close()
    }
}
