import Storage

/// The schema of auth-svc's database — `auth.sqlite`, or the schema `auth` of a PostgreSQL
/// database — as numbered migrations, one list per dialect.
///
/// Times are integer Unix seconds (UTC), but for the sign-in throttle's `…_ms` columns (Unix
/// milliseconds). Tokens — refresh, verification, reset — are stored
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
        Migration(
            "sign-in throttle: failures and locks, shared by every replica",
            sql: """
                -- One row per failed sign-in and subject: kind 'account' (subject: the lower-cased
                -- email, known or not) and kind 'address' (subject: the client address). Rows out of
                -- the window are deleted as failures are recorded (at most a minute apart per replica).
                CREATE TABLE sign_in_failures (
                    kind TEXT NOT NULL,
                    subject TEXT NOT NULL,
                    failed_at_ms INTEGER NOT NULL
                );
                CREATE INDEX sign_in_failures_subject ON sign_in_failures(kind, subject, failed_at_ms);
                CREATE INDEX sign_in_failures_age ON sign_in_failures(failed_at_ms);

                -- Accounts refused until locked_until_ms: the window's length after the failure that
                -- locked them. Deleted when the lock ends (as failures are), or is lifted.
                CREATE TABLE sign_in_locks (
                    account TEXT PRIMARY KEY,
                    locked_until_ms INTEGER NOT NULL
                );
                """),
    ]

    /// Both histories, as `Database` takes them.
    static var allMigrations: Migrations { Migrations(sqlite: migrations, postgresql: postgreSQLMigrations) }

    /// The same schema on PostgreSQL, in the schema `auth`, as numbered migrations
    /// (`storage_schema_version`). Its history starts at SQLite's schema after its first two
    /// steps (one step here), and later steps follow SQLite's one for one, with the same table,
    /// column, index and constraint names; integers are `bigint` (Booleans 0/1), text is `text`.
    ///
    /// One difference, for the revocation feed: `revocations.sequence` is taken from the
    /// one-row counter `revocation_sequence`, not from an identity. An identity hands out
    /// numbers in the order transactions *start*, so with several writers a poller could read
    /// sequence 6, move past it, and only then see 5 commit; bumping one row makes concurrent
    /// revocations conflict (the later is re-run by `Database.write`), so numbers follow commit
    /// order, and the counter never goes back when the table is pruned (as SQLite's
    /// `AUTOINCREMENT` never does).
    static let postgreSQLMigrations: [Migration] = [
        Migration(
            "users, identities, sessions, tokens, revocation feed, outbox",
            sql: """
                CREATE TABLE users (
                    id text PRIMARY KEY,
                    email text NOT NULL,
                    email_verified bigint NOT NULL DEFAULT 0,
                    display_name text,
                    password_hash text,
                    created_at bigint NOT NULL,
                    updated_at bigint NOT NULL
                );
                -- Emails are stored lower-cased; an ID-token user without an email has "".
                CREATE UNIQUE INDEX users_email ON users(email) WHERE email <> '';

                -- Sign-in identities at Google and Apple, keyed on (issuer, sub) as API.md says.
                -- email_verified 0: linked with an email nobody had proved (see the SQLite step 2).
                CREATE TABLE identities (
                    issuer text NOT NULL,
                    subject text NOT NULL,
                    provider text COLLATE "C" NOT NULL,
                    user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    email text,
                    created_at bigint NOT NULL,
                    email_verified bigint NOT NULL DEFAULT 1,
                    PRIMARY KEY (issuer, subject)
                );
                CREATE INDEX identities_user ON identities(user_id);

                -- One row per sign-in; its refresh tokens rotate within it (the "family").
                CREATE TABLE sessions (
                    id text PRIMARY KEY,
                    user_id text NOT NULL,
                    method text NOT NULL,
                    authenticated_at bigint NOT NULL,
                    created_at bigint NOT NULL,
                    expires_at bigint NOT NULL,
                    revoked_at bigint,
                    revoke_reason text
                );
                CREATE INDEX sessions_user ON sessions(user_id);

                -- Every refresh token ever issued; rotated_at is set when it was exchanged.
                CREATE TABLE refresh_tokens (
                    token_hash text PRIMARY KEY,
                    session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    created_at bigint NOT NULL,
                    rotated_at bigint
                );
                CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id);

                -- The feed other services poll; sequence orders it, taken from revocation_sequence.
                CREATE TABLE revocations (
                    sequence bigint PRIMARY KEY,
                    session_id text NOT NULL,
                    revoked_at bigint NOT NULL
                );
                -- The last sequence number issued: one row, bumped by every revocation.
                CREATE TABLE revocation_sequence (
                    last bigint NOT NULL
                );
                INSERT INTO revocation_sequence (last) VALUES (0);

                -- Single-use links: purpose is 'verify-email' or 'reset-password'.
                CREATE TABLE email_tokens (
                    token_hash text PRIMARY KEY,
                    user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    purpose text NOT NULL,
                    email text NOT NULL,
                    created_at bigint NOT NULL,
                    expires_at bigint NOT NULL,
                    used_at bigint
                );
                CREATE INDEX email_tokens_user ON email_tokens(user_id, purpose);

                -- Mail waiting for delivery; a row is deleted only once delivered.
                CREATE TABLE outbox (
                    id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                    recipient text NOT NULL,
                    kind text NOT NULL,
                    subject text NOT NULL,
                    body text NOT NULL,
                    created_at bigint NOT NULL,
                    attempts bigint NOT NULL DEFAULT 0,
                    next_attempt_at bigint NOT NULL,
                    last_error text
                );
                CREATE INDEX outbox_due ON outbox(next_attempt_at);
                """),
        Migration(
            "sign-in throttle: failures and locks, shared by every replica",
            sql: """
                -- As SQLite's step 3 (times in Unix milliseconds), in bigint and text.
                CREATE TABLE sign_in_failures (
                    kind text NOT NULL,
                    subject text NOT NULL,
                    failed_at_ms bigint NOT NULL
                );
                CREATE INDEX sign_in_failures_subject ON sign_in_failures(kind, subject, failed_at_ms);
                CREATE INDEX sign_in_failures_age ON sign_in_failures(failed_at_ms);

                CREATE TABLE sign_in_locks (
                    account text PRIMARY KEY,
                    locked_until_ms bigint NOT NULL
                );
                """),
    ]
}
