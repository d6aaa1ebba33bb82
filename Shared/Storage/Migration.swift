/// One step of a database's schema history.
///
/// A database's migrations are an ordered list that only ever grows: step *n* (counting from
/// 1) brings the schema from version *n − 1* to *n*. Each dialect has its own list (see
/// `Migrations`), and its own place for the version: `PRAGMA user_version` on SQLite, the
/// table `storage_schema_version` in the service's schema on PostgreSQL. Opening a `Database`
/// applies, in order, the steps after the stored version, each in its own transaction
/// together with the version bump, so a failed step leaves the database at the previous
/// version. On PostgreSQL the schema is created by the first step's transaction, and every
/// step holds an advisory lock named after the schema, so replicas starting together apply
/// each step once. Never edit or reorder a step that has shipped; append a new one.
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
    /// The schema version: how many migrations were applied.
    package func schemaVersion() throws -> Int {
        if let session = postgresql {
            let exists = try queryValue(
                "SELECT count(*) FROM pg_tables WHERE schemaname = ? AND tablename = 'storage_schema_version'",
                [session.schema], as: Int.self)
            guard exists == 1 else { return 0 }
            return try queryValue("SELECT version FROM storage_schema_version", as: Int.self) ?? 0
        }
        return try queryValue("PRAGMA user_version", as: Int.self) ?? 0
    }

    /// Applies the migrations after the stored schema version, one transaction each.
    ///
    /// The version is read again inside each transaction, under the write lock (SQLite) or the
    /// schema's advisory lock (PostgreSQL), so two processes opening the same database at once
    /// cannot apply a step twice.
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
        let begin = dialect == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN ISOLATION LEVEL READ COMMITTED"
        return try transaction(.write, beginningWith: begin) { connection in
            if let session = connection.postgresql {
                // Held to the end of the transaction; replicas migrating at once queue here.
                try connection.execute("SELECT pg_advisory_xact_lock(hashtext(?))", ["storefront migrations " + session.schema])
            }
            let version = try connection.schemaVersion()
            guard version <= migrations.count else {
                throw StorageError.generic(
                    "the database is at schema version \(version), but this program knows only "
                        + "\(migrations.count) migrations; it was written by a newer version")
            }
            guard version < migrations.count else { return false }
            let migration = migrations[version]
            if let session = connection.postgresql, version == 0 {
                let schema = PostgreSQLSession.quoted(session.schema)
                // Created only when missing: CREATE SCHEMA IF NOT EXISTS needs the CREATE
                // privilege on the database even when the schema exists, and a role may be
                // given nothing but a schema made for it in advance.
                let exists = try connection.queryValue(
                    "SELECT count(*) FROM pg_namespace WHERE nspname = ?", [session.schema], as: Int.self) == 1
                if !exists { try connection.executeScript("CREATE SCHEMA \(schema)") }
                try connection.executeScript(
                    "CREATE TABLE \(schema).storage_schema_version (version integer NOT NULL); INSERT INTO \(schema).storage_schema_version VALUES (0)")
            }
            do {
                try migration.apply(connection)
            } catch let error as StorageError {
                throw error.adding(context: "migration \(version + 1) (\(migration.name))")
            }
            if connection.dialect == .postgresql {
                try connection.execute("UPDATE storage_schema_version SET version = ?", [version + 1])
            } else {
                try connection.executeScript("PRAGMA user_version = \(version + 1)")
            }
            return true
        }
    }
}
