import Foundation
import Storage
import Synchronization

/// A fresh directory under the system's temporary directory, for one test's database files.
///
/// Each test makes its own, so tests running in parallel never share a file; `remove()` deletes
/// it with everything inside.
struct TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    let path: String

    /// Creates a new, empty directory with a unique name.
    init() throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("storage-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        self.path = url.path
    }

    /// The path of the file `name` inside the directory.
    func file(_ name: String) -> String {
        path + "/" + name
    }

    /// The size in bytes of the file `name`, or 0 when it does not exist.
    func sizeOfFile(_ name: String) -> Int {
        let attributes = try? FileManager.default.attributesOfItem(atPath: file(name))
        return (attributes?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Deletes the directory and its contents; errors are ignored, as this only cleans up.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// An error thrown on purpose inside a transaction, to check that it rolls back.
struct DeliberateError: Error, Equatable {}

/// The schema most tests use: one table of named items and one counter row.
let itemMigrations = [
    Migration(
        "create items",
        sql: """
            CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, payload BLOB);
            CREATE TABLE counter (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
            INSERT INTO counter (id, value) VALUES (1, 0);
            """)
]

extension Database {
    /// The names in `items`, in insertion order, read through a reader.
    func itemNames() async throws -> [String] {
        try await read { connection in
            try connection.query("SELECT name FROM items ORDER BY id").map { try $0.value(at: 0, as: String.self) }
        }
    }
}

/// A counter that closures running on other threads can share.
final class SharedCounter: Sendable {
    private let count = Mutex(0)

    /// The current count.
    var value: Int { count.withLock { $0 } }

    /// Adds `amount` and returns the new count.
    @discardableResult
    func add(_ amount: Int) -> Int {
        count.withLock { count in
            count += amount
            return count
        }
    }
}
