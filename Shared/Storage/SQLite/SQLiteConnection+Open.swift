private import CSQLite
private import Foundation

extension SQLiteConnection {
    /// The role a connection plays for its `Database`.
    enum Role {
        /// The one connection that writes; it also sets the database up (WAL mode).
        case writer
        /// A read-only connection of the reader pool.
        case reader
    }

    /// Whether `path` names a database that lives in memory only (`:memory:`, or the empty
    /// path of a private temporary database), so that no second connection can share it.
    static func isInMemory(path: String) -> Bool {
        path == ":memory:" || path.isEmpty
    }

    /// Opens and configures a connection for `role`, timing its statements into `metrics`.
    /// Call it on the thread that will use it.
    ///
    /// - Throws: `StorageError` (`isCannotOpen`) when the directory does not exist or the file
    ///   cannot be opened, or any error of the configuration pragmas.
    static func open(path: String, role: Role, options: DatabaseOptions, metrics: StorageMetrics? = nil) throws -> SQLiteConnection {
        if !isInMemory(path: path) {
            try checkDirectory(of: path)
        }
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= role == .writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = StorageError(code: code, handle: handle).adding(context: "cannot open database '\(path)'")
            // A handle is allocated even when opening fails, and must be released.
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        let connection = SQLiteConnection(handle: handle, statementCacheCapacity: options.statementCacheCapacity, metrics: metrics)
        do {
            let code = sqlite3_busy_timeout(handle, options.busyTimeoutMilliseconds)
            guard code == SQLITE_OK else { throw StorageError(code: code, handle: handle) }
            try connection.configure(role: role, path: path, options: options)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    private func configure(role: Role, path: String, options: DatabaseOptions) throws {
        // Per connection; it must be set outside a transaction to take effect.
        try executeScript("PRAGMA foreign_keys = ON")
        guard role == .writer else { return }
        // WAL is a property of the database file: once set it persists, and readers share it.
        let mode = try queryValue("PRAGMA journal_mode = WAL", as: String.self)?.lowercased()
        if mode != "wal" && !Self.isInMemory(path: path) {
            throw StorageError.generic("cannot switch '\(path)' to WAL mode; journal mode is \(mode ?? "unknown")")
        }
        try executeScript("PRAGMA synchronous = \(options.synchronous.rawValue)")
    }

    /// Throws a clear `StorageError` when the directory that would hold `path` is missing,
    /// rather than SQLite's bare "unable to open database file".
    private static func checkDirectory(of path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw StorageError.cannotOpen("cannot open database '\(path)': directory '\(directory)' does not exist")
        }
        guard isDirectory.boolValue else {
            throw StorageError.cannotOpen("cannot open database '\(path)': '\(directory)' is not a directory")
        }
    }
}
