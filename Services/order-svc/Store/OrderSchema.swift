import Storage

/// The schema of `order.sqlite`, as numbered migrations (`PRAGMA user_version`).
enum OrderSchema {
    /// Every migration, oldest first; append, never edit.
    static let migrations: [Migration] = [
        Migration(
            "orders, idempotency keys, the test processor's ledger",
            sql: """
                -- step records how far PlaceOrder or CancelOrder got (see README):
                -- priced, reserved, charged, done, cancelling.
                CREATE TABLE orders (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    status TEXT NOT NULL,
                    step TEXT NOT NULL,
                    items_json TEXT NOT NULL,
                    total_amount INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    address_json TEXT NOT NULL,
                    card_brand TEXT,
                    card_last4 TEXT,
                    basket_version INTEGER NOT NULL,
                    idempotency_key TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    sequence INTEGER NOT NULL
                );
                CREATE INDEX orders_user ON orders(user_id, sequence);
                CREATE INDEX orders_step ON orders(step);

                -- The first answer to each (user, key); state is 'running' until it is stored.
                CREATE TABLE idempotency_keys (
                    user_id TEXT NOT NULL,
                    key TEXT NOT NULL,
                    request_hash TEXT NOT NULL,
                    state TEXT NOT NULL,
                    answer_json TEXT,
                    order_id TEXT,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (user_id, key)
                );

                -- The built-in test payment processor's ledger, one charge per order.
                CREATE TABLE test_charges (
                    order_id TEXT PRIMARY KEY,
                    amount INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    brand TEXT NOT NULL,
                    last4 TEXT NOT NULL,
                    status TEXT NOT NULL,
                    decline_reason TEXT,
                    created_at INTEGER NOT NULL,
                    refunded_at INTEGER
                );
                """)
    ]

    /// The same schema on PostgreSQL, in the schema `orders`, as numbered migrations
    /// (`storage_schema_version`).
    static let postgreSQLMigrations: [Migration] = []
}
