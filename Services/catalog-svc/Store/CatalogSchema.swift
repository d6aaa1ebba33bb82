import Storage

/// The schema of `catalog.sqlite`, as numbered migrations (`PRAGMA user_version`).
enum CatalogSchema {
    /// Every migration, oldest first; append, never edit.
    static let migrations: [Migration] = [
        Migration(
            "products with full-text search, favorites, stock reservations",
            sql: """
                CREATE TABLE products (
                    id INTEGER PRIMARY KEY,
                    title TEXT NOT NULL,
                    description TEXT NOT NULL,
                    category TEXT NOT NULL,
                    price_amount INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    image TEXT NOT NULL,
                    rating_rate REAL NOT NULL,
                    rating_count INTEGER NOT NULL,
                    stock INTEGER NOT NULL CHECK (stock >= 0),
                    updated_at INTEGER NOT NULL
                );
                CREATE INDEX products_category ON products(category COLLATE NOCASE, id);
                CREATE INDEX products_price ON products(price_amount, id);
                CREATE INDEX products_rating ON products(rating_rate, rating_count, id);

                -- An external-content FTS5 index over title and description, kept in step by triggers.
                CREATE VIRTUAL TABLE products_fts USING fts5(
                    title, description, content = 'products', content_rowid = 'id',
                    tokenize = 'unicode61 remove_diacritics 2');
                CREATE TRIGGER products_fts_insert AFTER INSERT ON products BEGIN
                    INSERT INTO products_fts (rowid, title, description) VALUES (new.id, new.title, new.description);
                END;
                CREATE TRIGGER products_fts_delete AFTER DELETE ON products BEGIN
                    INSERT INTO products_fts (products_fts, rowid, title, description)
                    VALUES ('delete', old.id, old.title, old.description);
                END;
                CREATE TRIGGER products_fts_update AFTER UPDATE OF title, description ON products BEGIN
                    INSERT INTO products_fts (products_fts, rowid, title, description)
                    VALUES ('delete', old.id, old.title, old.description);
                    INSERT INTO products_fts (rowid, title, description) VALUES (new.id, new.title, new.description);
                END;

                -- id orders a user's favorites, newest first.
                CREATE TABLE favorites (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id TEXT NOT NULL,
                    product_id INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
                    created_at INTEGER NOT NULL,
                    UNIQUE (user_id, product_id)
                );

                -- Stock taken by orders; released_at is set when it was given back.
                CREATE TABLE reservations (
                    id TEXT PRIMARY KEY,
                    created_at INTEGER NOT NULL,
                    released_at INTEGER
                );
                CREATE TABLE reservation_items (
                    reservation_id TEXT NOT NULL REFERENCES reservations(id),
                    product_id INTEGER NOT NULL,
                    count INTEGER NOT NULL,
                    PRIMARY KEY (reservation_id, product_id)
                );

                -- Facts about the database itself, e.g. whether the seed catalog was loaded.
                CREATE TABLE catalog_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                """),
        Migration("search index that finds CJK words inside longer runs, and its vocabulary", apply: searchIndexWithCJKBigrams),
    ]

    /// Migration 2: the search index holds the text as `SearchText.indexForm` cuts it, which
    /// only Swift can compute, so it is no longer an external-content index kept by triggers
    /// but a table of its own that `CatalogStore.write` keeps in step (a delete still by
    /// trigger, whatever deletes the product). `products_vocabulary` lists its terms, the
    /// words spelling suggestions are drawn from. The products are untouched; the index is
    /// rebuilt from them in the migration's transaction, so a failure leaves the old one.
    @Sendable static func searchIndexWithCJKBigrams(_ connection: Connection) throws {
        try connection.executeScript(
            """
            DROP TRIGGER products_fts_insert;
            DROP TRIGGER products_fts_delete;
            DROP TRIGGER products_fts_update;
            DROP TABLE products_fts;
            CREATE VIRTUAL TABLE products_fts USING fts5(title, description, tokenize = 'unicode61 remove_diacritics 2');
            CREATE TRIGGER products_fts_delete AFTER DELETE ON products BEGIN
                DELETE FROM products_fts WHERE rowid = old.id;
            END;
            CREATE VIRTUAL TABLE products_vocabulary USING fts5vocab('products_fts', 'row');
            """)
        try CatalogStore.rebuildSearchIndex(on: connection)
    }

    /// The same schema on PostgreSQL, in the schema `catalog`, as numbered migrations
    /// (`storage_schema_version`).
    static let postgreSQLMigrations: [Migration] = []
}
