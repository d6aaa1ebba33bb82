internal import Foundation
import Storage
import Telemetry

/// The SQL of basket-svc, for SQLite and PostgreSQL alike (one text serves both; the one
/// PostgreSQL-only statement is ``notifyChange(userID:on:)``). Nothing else in the service
/// writes SQL.
///
/// Every change is one write transaction that reads the basket, checks the request against
/// it (expected version, line, limits) and writes, so concurrent changes of one basket are
/// applied one after the other and each sees the last one's result: of two changes made with
/// the same `expectedVersion`, exactly one succeeds. On SQLite the transaction is
/// `BEGIN IMMEDIATE` (one writer at a time). On PostgreSQL — where any number of replicas
/// share the database — it is `SERIALIZABLE` and run again from the start when it loses a
/// serialization conflict (`Database.write(_:)`): the second of two changes that read the
/// same version is rolled back, re-reads the basket and then refuses with `versionConflict`
/// (or, without an expected version, applies on top of the first). So the guarantee holds
/// across replicas with no lock of our own, and each write closure only touches the database.
///
/// On PostgreSQL every change also notifies ``changeChannel`` with the user id, delivered to
/// the listening replicas when (and only if) it commits: how a `WatchBasket` on one replica
/// learns of a change made on another (``BasketChangeFeed``).
///
/// Thread-safe (`Sendable`): every method runs on the database's own threads.
final class BasketStore: Sendable {
    /// The database: `basket.sqlite` in the data directory (or `:memory:` in tests), or the
    /// schema `basket` of a PostgreSQL database.
    let database: Database

    /// The PostgreSQL notification channel every committed change is announced on, its
    /// payload the user id.
    static let changeChannel = "basket_changes"

    /// Wraps an open database whose migrations are `BasketSchema.migrations`.
    init(database: Database) {
        self.database = database
    }

    /// Opens (creating and migrating) the database at `location` with `synchronous=FULL`
    /// (`synchronous_commit=on` on PostgreSQL): an acknowledged change survives a power loss,
    /// as an order placed from it expects. Its queries and transactions are recorded in
    /// `metrics`, when given.
    static func open(location: DatabaseLocation, metrics: MetricsRegistry? = nil) async throws -> BasketStore {
        let database = try await Database(
            location: location, options: DatabaseOptions(synchronous: .full, metrics: metrics),
                migrations: Migrations(sqlite: BasketSchema.migrations, postgresql: BasketSchema.postgreSQLMigrations))
        return BasketStore(database: database)
    }

    /// The basket of `userID`; the empty basket (version 0) when the user never changed it. A
    /// short read (the user's lines by key), answered on the event loop.
    func basket(userID: String) async throws -> BasketRecord {
        try await database.shortRead { connection in try Self.basket(userID: userID, on: connection) }
    }

    /// Adds `line` (its id and count included) to the basket of `userID`.
    ///
    /// - Throws: `BasketError` `alreadyInBasket`, `basketFull` or `currencyMismatch`.
    func add(_ line: LineRecord, userID: String, now: Int64 = BasketClock.now()) async throws -> BasketRecord {
        try await database.write { connection in
            let current = try Self.basket(userID: userID, on: connection)
            if let refusal = current.refusal(toAdd: line.productID, currency: line.currency) { throw refusal }
            try Self.bumpVersion(userID: userID, now: now, on: connection)
            try connection.execute(
                """
                INSERT INTO basket_lines (id, user_id, product_id, title, unit_amount, currency, image_url, count)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [line.id, userID, line.productID, line.title, line.unitAmount, line.currency, line.imageURL, line.count])
            return try Self.basket(userID: userID, on: connection)
        }
    }

    /// Sets the count of the line `itemID` of `userID`'s basket; 0 removes the line. Setting
    /// the count a line already has changes nothing (the version stays).
    ///
    /// - Throws: `BasketError` `versionConflict` when `expectedVersion` is given and is not the
    ///   basket's version; `itemNotFound` when the basket has no such line.
    func setCount(
        _ count: Int, itemID: String, userID: String, expectedVersion: Int?, now: Int64 = BasketClock.now()
    ) async throws -> BasketRecord {
        try await database.write { connection in
            let current = try Self.basket(userID: userID, on: connection)
            try Self.check(expectedVersion, against: current)
            guard let line = current.lines.first(where: { $0.id == itemID }) else { throw BasketError.itemNotFound }
            guard line.count != count else { return current }
            if count == 0 {
                try connection.execute("DELETE FROM basket_lines WHERE id = ? AND user_id = ?", [itemID, userID])
            } else {
                try connection.execute(
                    "UPDATE basket_lines SET count = ? WHERE id = ? AND user_id = ?", [count, itemID, userID])
            }
            try Self.bumpVersion(userID: userID, now: now, on: connection)
            return try Self.basket(userID: userID, on: connection)
        }
    }

    /// Removes every line of `userID`'s basket. Clearing an empty basket changes nothing.
    ///
    /// - Throws: `BasketError.versionConflict` when `expectedVersion` is given and is not the
    ///   basket's version.
    func clear(userID: String, expectedVersion: Int?, now: Int64 = BasketClock.now()) async throws -> BasketRecord {
        try await database.write { connection in
            let current = try Self.basket(userID: userID, on: connection)
            try Self.check(expectedVersion, against: current)
            guard !current.lines.isEmpty else { return current }
            try connection.execute("DELETE FROM basket_lines WHERE user_id = ?", [userID])
            try Self.bumpVersion(userID: userID, now: now, on: connection)
            return try Self.basket(userID: userID, on: connection)
        }
    }

    // MARK: Shared SQL

    /// The basket of `userID`, read on `connection`.
    static func basket(userID: String, on connection: Connection) throws -> BasketRecord {
        guard let row = try connection.queryOne("SELECT version, updated_at FROM baskets WHERE user_id = ?", [userID])
        else { return .empty }
        let lines = try connection.query(
            """
            SELECT id, product_id, title, unit_amount, currency, image_url, count
            FROM basket_lines WHERE user_id = ? ORDER BY seq
            """, [userID]
        ).map { line in
            LineRecord(
                id: try line.value(at: 0), productID: try line.value(at: 1), title: try line.value(at: 2),
                unitAmount: try line.value(at: 3), currency: try line.value(at: 4), imageURL: try line.value(at: 5),
                count: try line.value(at: 6))
        }
        return BasketRecord(version: try row.value(at: 0), updatedAt: try row.value(at: 1), lines: lines)
    }

    /// Records a change of `userID`'s basket: version + 1 (creating the row at version 1),
    /// announced to the other replicas on PostgreSQL. Every change calls it exactly once.
    static func bumpVersion(userID: String, now: Int64, on connection: Connection) throws {
        // `baskets.version`, qualified: PostgreSQL finds a bare `version` ambiguous beside
        // `excluded.version`.
        try connection.execute(
            """
            INSERT INTO baskets (user_id, version, updated_at) VALUES (?, 1, ?)
            ON CONFLICT (user_id) DO UPDATE SET version = baskets.version + 1, updated_at = excluded.updated_at
            """, [userID, now])
        try notifyChange(userID: userID, on: connection)
    }

    /// On PostgreSQL, queues a notification of `userID`'s change on ``changeChannel``: sent
    /// when the transaction commits, dropped when it rolls back (or is run again). Nothing on
    /// SQLite, whose database only this process opens: its own watchers are told directly.
    static func notifyChange(userID: String, on connection: Connection) throws {
        switch connection.dialect {
        case .sqlite: break
        case .postgresql: try connection.execute("SELECT pg_notify('\(changeChannel)', ?)", [userID])
        }
    }

    /// Throws `versionConflict` unless `expectedVersion` is absent or `basket`'s version.
    static func check(_ expectedVersion: Int?, against basket: BasketRecord) throws {
        if let expectedVersion, expectedVersion != basket.version {
            throw BasketError.versionConflict(expected: expectedVersion, current: basket.version)
        }
    }
}
