import Storage

/// The schema of `auth.sqlite`, as numbered migrations (`PRAGMA user_version`).
///
/// Times are integer Unix seconds (UTC). Tokens — refresh, verification, reset — are stored
/// only as SHA-256 hashes (`OpaqueToken.hash`), never in the clear.
enum AuthSchema {
    /// Every migration, oldest first; append, never edit.
    static let migrations: [Migration] = [
        Migration(
            "users, identities, sessions, tokens, outbox",
            sql: """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY,
                    email TEXT NOT NULL,
                    email_verified INTEGER NOT NULL DEFAULT 0,
                    display_name TEXT,
                    password_hash TEXT,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );
                -- Emails are stored lower-cased; an ID-token user without an email has "".
                CREATE UNIQUE INDEX users_email ON users(email) WHERE email <> '';

                -- Sign-in identities at Google and Apple, keyed on (issuer, sub) as API.md says.
                CREATE TABLE identities (
                    issuer TEXT NOT NULL,
                    subject TEXT NOT NULL,
                    provider TEXT NOT NULL,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    email TEXT,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (issuer, subject)
                );
                CREATE INDEX identities_user ON identities(user_id);

                -- One row per sign-in; its refresh tokens rotate within it (the "family").
                CREATE TABLE sessions (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    method TEXT NOT NULL,
                    authenticated_at INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL,
                    revoked_at INTEGER,
                    revoke_reason TEXT
                );
                CREATE INDEX sessions_user ON sessions(user_id);

                -- Every refresh token ever issued; rotated_at is set when it was exchanged.
                CREATE TABLE refresh_tokens (
                    token_hash TEXT PRIMARY KEY,
                    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    created_at INTEGER NOT NULL,
                    rotated_at INTEGER
                );
                CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id);

                -- The feed other services poll; sequence orders it.
                CREATE TABLE revocations (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    session_id TEXT NOT NULL,
                    revoked_at INTEGER NOT NULL
                );

                -- Single-use links: purpose is 'verify-email' or 'reset-password'.
                CREATE TABLE email_tokens (
                    token_hash TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    purpose TEXT NOT NULL,
                    email TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL,
                    used_at INTEGER
                );
                CREATE INDEX email_tokens_user ON email_tokens(user_id, purpose);

                -- Mail waiting for delivery; a row is deleted only once delivered.
                CREATE TABLE outbox (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    recipient TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    subject TEXT NOT NULL,
                    body TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    last_error TEXT
                );
                CREATE INDEX outbox_due ON outbox(next_attempt_at);
                """),
        Migration(
            "identities: whether the provider vouched for the email; one spelling of Google's issuer",
            sql: """
                -- 0: linked with an email nobody had proved. Such an identity goes when the address
                -- is proved (a reset or verification link, a provider that vouches for it): it may
                -- belong to someone who claimed another's address (account pre-hijacking).
                ALTER TABLE identities ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 1;
                -- Google writes its issuer two ways; identities are stored under the URL (one
                -- Google account, one identity). A subject stored under both keeps its first.
                UPDATE OR IGNORE identities SET issuer = 'https://accounts.google.com' WHERE issuer = 'accounts.google.com';
                """),
    ]

    /// The same schema on PostgreSQL, in the schema `auth`, as numbered migrations
    /// (`storage_schema_version`).
    static let postgreSQLMigrations: [Migration] = []
}
