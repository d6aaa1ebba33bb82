/// One step of a database's schema history.
///
/// A database's migrations are an ordered list that only ever grows: step *n* (counting from
/// 1) brings the schema from version *n − 1* to *n*, and the version is kept in
/// `PRAGMA user_version`. Opening a `Database` applies, in order, the steps after the stored
/// version, each in its own `BEGIN IMMEDIATE` transaction together with the version bump, so
/// a failed step leaves the database at the previous version. Never edit or reorder a step
/// that has shipped; append a new one.
///
/// The SQL must not open or end transactions itself. `PRAGMA foreign_keys` cannot change
/// inside a transaction, so a step that rebuilds a table keeps the references valid itself.
package struct Migration: Sendable {
    /// A short description for error messages, for example "create users".
    package let name: String
    /// Applies the step on the writer connection, inside the migration's transaction.
    let apply: @Sendable (Connection) throws -> Void

    /// A step made of SQL statements, separated by `;`.
    package init(_ name: String, sql: String) {
        self.name = name
        self.apply = { connection in try connection.executeScript(sql) }
    }

    /// A step that needs code, for example to transform existing rows.
    package init(_ name: String, apply: @escaping @Sendable (Connection) throws -> Void) {
        self.name = name
        self.apply = apply
    }
}

extension Connection {
    /// The schema version stored in `PRAGMA user_version`: how many migrations were applied.
    package func schemaVersion() throws -> Int {
        try queryValue("PRAGMA user_version", as: Int.self) ?? 0
    }

    /// Applies the migrations after the stored schema version, one transaction each.
    ///
    /// The version is read again inside each transaction, under the write lock, so two
    /// processes opening the same database at once cannot apply a step twice.
    ///
    /// - Returns: How many steps were applied.
    /// - Throws: `StorageError` when the database is newer than `migrations` (it was written
    ///   by a later program), or the first error of a step, with the step named.
    @discardableResult
    func migrate(_ migrations: [Migration]) throws -> Int {
        var applied = 0
        while try applyNextMigration(of: migrations) {
            applied += 1
        }
        return applied
    }

    /// Applies the next pending migration, returning false when none is left.
    private func applyNextMigration(of migrations: [Migration]) throws -> Bool {
        try transaction(beginningWith: "BEGIN IMMEDIATE") { connection in
            let version = try connection.schemaVersion()
            guard version <= migrations.count else {
                throw StorageError.generic(
                    "the database is at schema version \(version), but this program knows only "
                        + "\(migrations.count) migrations; it was written by a newer version")
            }
            guard version < migrations.count else { return false }
            let migration = migrations[version]
            do {
                try migration.apply(connection)
            } catch let error as StorageError {
                throw error.adding(context: "migration \(version + 1) (\(migration.name))")
            }
            try connection.executeScript("PRAGMA user_version = \(version + 1)")
            return true
        }
    }
}
