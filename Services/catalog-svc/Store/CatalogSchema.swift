import Storage

/// The schema of catalog-svc's database: `catalog.sqlite` as numbered migrations (`PRAGMA
/// user_version`), or the schema `catalog` of a PostgreSQL database (`postgreSQLMigrations`).
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
    /// (`storage_schema_version`). Its history starts at SQLite's current schema.
    ///
    /// Text that is sorted or compared is `COLLATE "C"` (byte-wise, as SQLite compares), and
    /// `lower(… COLLATE "C")` folds ASCII letters only, as SQLite's `NOCASE` does. The search
    /// index is `products_search`: one `tsvector` per product (title weight `A`, description
    /// `B`) under a GIN index, written by `CatalogStore.indexForSearch` and deleted with its
    /// product by cascade.
    static let postgreSQLMigrations: [Migration] = [
        Migration(
            "products with full-text search, favorites, stock reservations",
            sql: """
                CREATE TABLE products (
                    id bigint PRIMARY KEY,
                    title text COLLATE "C" NOT NULL,
                    description text COLLATE "C" NOT NULL,
                    category text COLLATE "C" NOT NULL,
                    price_amount bigint NOT NULL,
                    currency text COLLATE "C" NOT NULL,
                    image text COLLATE "C" NOT NULL,
                    rating_rate double precision NOT NULL,
                    rating_count bigint NOT NULL,
                    stock bigint NOT NULL CHECK (stock >= 0),
                    updated_at bigint NOT NULL
                );
                CREATE INDEX products_category ON products (lower(category COLLATE "C"), id);
                CREATE INDEX products_price ON products (price_amount, id);
                CREATE INDEX products_rating ON products (rating_rate, rating_count, id);

                CREATE TABLE products_search (
                    product_id bigint PRIMARY KEY REFERENCES products (id) ON DELETE CASCADE,
                    document tsvector NOT NULL
                );
                CREATE INDEX products_search_document ON products_search USING gin (document);

                -- id orders a user's favorites, newest first.
                CREATE TABLE favorites (
                    id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                    user_id text COLLATE "C" NOT NULL,
                    product_id bigint NOT NULL REFERENCES products (id) ON DELETE CASCADE,
                    created_at bigint NOT NULL,
                    UNIQUE (user_id, product_id)
                );

                -- Stock taken by orders; released_at is set when it was given back.
                CREATE TABLE reservations (
                    id text COLLATE "C" PRIMARY KEY,
                    created_at bigint NOT NULL,
                    released_at bigint
                );
                CREATE TABLE reservation_items (
                    reservation_id text COLLATE "C" NOT NULL REFERENCES reservations (id),
                    product_id bigint NOT NULL,
                    count bigint NOT NULL,
                    PRIMARY KEY (reservation_id, product_id)
                );

                -- Facts about the database itself, e.g. whether the seed catalog was loaded.
                CREATE TABLE catalog_meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL)
                """),
        Migration("the text search configuration of the search index", apply: { try createSearchConfiguration(on: $0) }),
    ]

    /// PostgreSQL migration 2: the text search configuration `catalog_search` (in the schema
    /// `catalog`; `CatalogStore.SearchIndex` writes and queries with it): PostgreSQL's
    /// `simple` (each token lower-cased, no stemming, no stop words), with the words' accents
    /// removed by the `unaccent` dictionary, as `unicode61`'s `remove_diacritics` removes them.
    ///
    /// `unaccent` is a trusted extension (PostgreSQL 13 and later), so a role that may create
    /// the schema may create it. Where it cannot be created (the server lacks it, or the role
    /// may not), the configuration is plain `simple` — searches then keep accents (`cafe` does
    /// not find `café`) — and `catalog_meta` records it (`search_accents` = `kept`; else
    /// `removed`) for the service to warn about at start.
    ///
    /// - Parameter accentExtension: The extension to create; tests name a missing one.
    static func createSearchConfiguration(on connection: Connection, accentExtension: String = "unaccent") throws {
        let dictionarySchema: String? = try? connection.savepoint { connection in
            try connection.executeScript("CREATE EXTENSION IF NOT EXISTS \(accentExtension)")
            // Installed here, or before in another schema (IF NOT EXISTS then leaves it there).
            return try connection.queryValue(
                "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = ?",
                [accentExtension], as: String.self)
        }
        var script = "CREATE TEXT SEARCH CONFIGURATION catalog_search (COPY = pg_catalog.simple);"
        if let dictionarySchema {
            let schema = "\"" + dictionarySchema.replacing("\"", with: "\"\"") + "\""
            script += """
                ALTER TEXT SEARCH CONFIGURATION catalog_search
                    ALTER MAPPING FOR word, numword, hword, numhword, hword_part, hword_numpart
                    WITH \(schema).unaccent, pg_catalog.simple;
                """
        }
        try connection.executeScript(script)
        try connection.execute(
            "INSERT INTO catalog_meta (key, value) VALUES ('search_accents', ?)", [dictionarySchema == nil ? "kept" : "removed"])
    }
}
