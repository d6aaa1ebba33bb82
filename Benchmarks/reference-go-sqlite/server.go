package main

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	_ "github.com/mattn/go-sqlite3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The DSN options of every connection, the same settings as our SQLiteConnection+Open.swift:
// foreign keys on, a 5 s busy timeout, and no per-connection mutex (database/sql hands a
// connection to one goroutine at a time, as our worker threads own theirs).
const commonOptions = "_foreign_keys=1&_busy_timeout=5000&_mutex=no"

// openWriter opens the one connection that writes `path`: WAL, synchronous=FULL (ours'
// default), BEGIN IMMEDIATE for every transaction. One connection, so concurrent writers
// queue in Go (database/sql's pool) rather than sleeping in SQLite's busy handler.
func openWriter(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=FULL&_txlock=immediate&"+commonOptions)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	return db, db.Ping()
}

// openReaders opens a pool of `count` read-only connections to `path` (kept open: database/sql
// would otherwise close all but two idle ones and reopen them under load).
func openReaders(path string, count int) (*sql.DB, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_txlock=deferred&"+commonOptions)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(count)
	db.SetMaxIdleConns(count)
	db.SetConnMaxLifetime(0)
	return db, db.Ping()
}

// statements prepares each SQL text once per *sql.DB and keeps it: a database/sql Stmt
// prepares itself on each connection of the pool as it first runs there.
type statements struct {
	db    *sql.DB
	mu    sync.RWMutex
	known map[string]*sql.Stmt
}

// newStatements keeps the prepared statements of `db`.
func newStatements(db *sql.DB) *statements {
	return &statements{db: db, known: map[string]*sql.Stmt{}}
}

// get returns the prepared statement of `text`, preparing it the first time.
func (s *statements) get(text string) (*sql.Stmt, error) {
	s.mu.RLock()
	stmt := s.known[text]
	s.mu.RUnlock()
	if stmt != nil {
		return stmt, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if stmt = s.known[text]; stmt != nil {
		return stmt, nil
	}
	stmt, err := s.db.Prepare(text)
	if err != nil {
		return nil, err
	}
	s.known[text] = stmt
	return stmt, nil
}

// database is one *sql.DB (a writer or a pool of readers) with its prepared statements.
type database struct {
	db    *sql.DB
	stmts *statements
}

// newDatabase keeps the prepared statements of `db`.
func newDatabase(db *sql.DB) *database {
	return &database{db: db, stmts: newStatements(db)}
}

// prepare prepares each of `texts` now, so that a typo fails at start, not on a call.
func (d *database) prepare(texts ...string) error {
	for _, text := range texts {
		if _, err := d.stmts.get(text); err != nil {
			return fmt.Errorf("prepare %q: %w", text, err)
		}
	}
	return nil
}

// transaction runs `body` in one transaction (BEGIN IMMEDIATE on a writer, whose DSN says
// _txlock=immediate; deferred on readers); commits when it returns nil, rolls back otherwise.
// A failure of BEGIN or COMMIT is an internal error; `body`'s errors pass unchanged.
func (d *database) transaction(ctx context.Context, body func(*sql.Tx) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return internalError(err)
	}
	if err := body(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return internalError(err)
	}
	return nil
}

// statement is the prepared statement `text` in `tx`.
func (d *database) statement(ctx context.Context, tx *sql.Tx, text string) (*sql.Stmt, error) {
	stmt, err := d.stmts.get(text)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, stmt), nil
}

// exec runs the prepared statement `text` in `tx`.
func (d *database) exec(ctx context.Context, tx *sql.Tx, text string, args ...interface{}) (sql.Result, error) {
	stmt, err := d.statement(ctx, tx, text)
	if err != nil {
		return nil, err
	}
	return stmt.ExecContext(ctx, args...)
}

// changes runs the prepared statement `text` in `tx` and counts the rows it changed.
func (d *database) changes(ctx context.Context, tx *sql.Tx, text string, args ...interface{}) (int64, error) {
	result, err := d.exec(ctx, tx, text, args...)
	if err != nil {
		return 0, err
	}
	return result.RowsAffected()
}

// scanner reads one row's columns.
type scanner interface{ Scan(...interface{}) error }

// failedRow is the row of a statement that could not be prepared: its Scan says why.
type failedRow struct{ err error }

// Scan returns the preparation's error.
func (r failedRow) Scan(...interface{}) error { return r.err }

// row runs the prepared query `text` in `tx` for its first row (sql.ErrNoRows on Scan when none).
func (d *database) row(ctx context.Context, tx *sql.Tx, text string, args ...interface{}) scanner {
	stmt, err := d.statement(ctx, tx, text)
	if err != nil {
		return failedRow{err}
	}
	return stmt.QueryRowContext(ctx, args...)
}

// query runs the prepared query `text` in `tx`.
func (d *database) query(ctx context.Context, tx *sql.Tx, text string, args ...interface{}) (*sql.Rows, error) {
	stmt, err := d.statement(ctx, tx, text)
	if err != nil {
		return nil, err
	}
	return stmt.QueryContext(ctx, args...)
}

// shopError is an error the client sees with `code`, `message` and our `shop-error-reason`
// trailer (API.md §1).
func shopError(ctx context.Context, code codes.Code, reason, message string) error {
	_ = grpc.SetTrailer(ctx, metadata.Pairs("shop-error-reason", reason))
	return status.Error(code, message)
}

// internalError is a database failure, as the client sees it.
func internalError(err error) error {
	return status.Errorf(codes.Internal, "internal error: %v", err)
}

// unaryMethod describes method `name` of `service`: it decodes the JSON request into a new
// Req and calls `call` on the registered server.
func unaryMethod[Server any, Req any](service, name string, call func(Server, context.Context, *Req) (interface{}, error)) grpc.MethodDesc {
	fullMethod := "/" + service + "/" + name
	return grpc.MethodDesc{
		MethodName: name,
		Handler: func(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
			in := new(Req)
			if err := dec(in); err != nil {
				return nil, shopError(ctx, codes.InvalidArgument, "MALFORMED_MESSAGE", "The message is not valid JSON.")
			}
			if interceptor == nil {
				return call(srv.(Server), ctx, in)
			}
			info := &grpc.UnaryServerInfo{Server: srv, FullMethod: fullMethod}
			return interceptor(ctx, in, info, func(ctx context.Context, req interface{}) (interface{}, error) {
				return call(srv.(Server), ctx, req.(*Req))
			})
		},
	}
}

// callerID is the `sub` claim of the call's `authorization: Bearer` JWT, read WITHOUT checking
// the signature (ours verifies it against auth-svc's keys): the reference measures the store.
func callerID(ctx context.Context) (string, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	values := md.Get("authorization")
	if len(values) == 0 || !strings.HasPrefix(values[0], "Bearer ") {
		return "", shopError(ctx, codes.Unauthenticated, "MISSING_TOKEN", "Sign in first.")
	}
	parts := strings.Split(strings.TrimPrefix(values[0], "Bearer "), ".")
	if len(parts) != 3 {
		return "", shopError(ctx, codes.Unauthenticated, "INVALID_ACCESS_TOKEN", "The access token is not valid.")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Sub string `json:"sub"`
	}
	if err != nil || json.Unmarshal(payload, &claims) != nil || claims.Sub == "" {
		return "", shopError(ctx, codes.Unauthenticated, "INVALID_ACCESS_TOKEN", "The access token is not valid.")
	}
	return claims.Sub, nil
}
