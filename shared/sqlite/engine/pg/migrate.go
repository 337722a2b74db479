// Package pg is the store engine's PostgreSQL backend for the hub (issue
// 25; docs/postgres.md). It lives beside the engine, not in it, so that an
// edge, which only ever runs on SQLite, never links the PostgreSQL driver;
// the hub's node picks it when its store is a postgres:// URL. Today it
// holds the backend's migrations and the hub's log with its safe order.
package pg

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Querier is what the backend's small stores run on: a pool, a
// connection or a transaction.
type Querier interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}

//go:embed migrations/*.sql
var engineMigrations embed.FS

// Migrate applies, in name order, the engine's migrations and then those
// in extra (the nouns' PostgreSQL migrations: sqlite.PostgresMigrations),
// each file system's *.sql one folder down (migrations/, pgmigrations/), that pool's
// database has not had, each in its own transaction, and records them in
// schema_migrations. Hubs starting together take turns (an advisory lock).
func Migrate(ctx context.Context, pool *pgxpool.Pool, extra ...fs.FS) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockMigrate); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockMigrate)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	for _, fsys := range append([]fs.FS{engineMigrations}, extra...) {
		if err := migrateFS(ctx, conn, fsys); err != nil {
			return err
		}
	}
	return nil
}

func migrateFS(ctx context.Context, conn *pgxpool.Conn, fsys fs.FS) error {
	names, err := fs.Glob(fsys, "*/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		key := path.Base(name)
		var done bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = $1)`, key).Scan(&done); err != nil || done {
			if err != nil {
				return err
			}
			continue
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		if err := applyMigration(ctx, conn, key, string(body)); err != nil {
			return fmt.Errorf("pg: migration %s: %w", key, err)
		}
	}
	return nil
}

// applyMigration runs one file (several statements: the simple protocol)
// and records it in one transaction.
func applyMigration(ctx context.Context, conn *pgxpool.Conn, key, body string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, body); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name) VALUES ($1)`, key); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// The advisory lock keys of the backend: one number per coordinated job
// across the hubs (docs/postgres.md lists them).
const (
	lockMigrate int64 = 0x6b617373_0001 // "kass" 1: migrations
	lockLogPos  int64 = 0x6b617373_0002 // "kass" 2: giving the log positions
)
