import Storage

/// The schema of `basket.sqlite`, as numbered migrations (`PRAGMA user_version`).
///
/// One row per user who ever changed their basket (its version and when it last changed), and
/// one row per line. A line keeps the title, unit price and image catalog-svc gave when it was
/// added, so reads never need the catalog. Times are Unix milliseconds (UTC).
enum BasketSchema {
    /// Every migration, oldest first; append, never edit.
    static let migrations: [Migration] = [
        Migration(
            "baskets and their lines",
            sql: """
                -- The basket row is never deleted: its version must keep growing, even across a
                -- clear, so that an old expectedVersion can never match again.
                CREATE TABLE baskets (
                    user_id TEXT PRIMARY KEY,
                    version INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );

                -- seq orders the lines oldest first; id is the public item id (a lower-case UUID).
                CREATE TABLE basket_lines (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    user_id TEXT NOT NULL REFERENCES baskets(user_id) ON DELETE CASCADE,
                    product_id INTEGER NOT NULL,
                    title TEXT NOT NULL,
                    unit_amount INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    image_url TEXT NOT NULL,
                    count INTEGER NOT NULL CHECK (count BETWEEN 1 AND 10),
                    UNIQUE (user_id, product_id)
                );
                CREATE INDEX basket_lines_user ON basket_lines(user_id, seq);
                """)
    ]

    /// The same schema on PostgreSQL, in the schema `basket`, as numbered migrations
    /// (`storage_schema_version`).
    static let postgreSQLMigrations: [Migration] = []
}
