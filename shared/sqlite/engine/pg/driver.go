package pg

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/stdlib"
)

// DriverName is pgx's database/sql driver (pgx/v5/stdlib) with the
// engine's statement text rewritten: every statement's final text goes
// through Rebind once (cached by text), and a Go bool is bound as 1/0,
// as SQLite's driver binds it (the flags are integer columns). The
// engine runs on database/sql (its writer, reader pool, prepared
// statements and group commit), so PostgreSQL takes the same road rather
// than a second engine on pgx's native interface.
const DriverName = "kassa_pgx"

func init() { sql.Register(DriverName, rebindDriver{}) }

// maxRebound bounds the cache of rewritten texts: queries built from
// filters vary; past the bound they are rewritten on every run.
const maxRebound = 4096

var (
	rebound  sync.Map
	nRebound atomic.Int32
)

// rebindCached is Rebind(q), cached by q.
func rebindCached(q string) string {
	if r, ok := rebound.Load(q); ok {
		return r.(string)
	}
	r := Rebind(q)
	if nRebound.Load() < maxRebound {
		if _, loaded := rebound.LoadOrStore(q, r); !loaded {
			nRebound.Add(1)
		}
	}
	return r
}

type rebindDriver struct{}

func (rebindDriver) Open(dsn string) (driver.Conn, error) {
	c, err := stdlib.GetDefaultDriver().Open(dsn)
	if err != nil {
		return nil, err
	}
	return &conn{c.(*stdlib.Conn)}, nil
}

// conn is a pgx connection whose statements are rebound.
type conn struct{ *stdlib.Conn }

func (c *conn) Prepare(q string) (driver.Stmt, error) {
	return c.Conn.Prepare(rebindCached(q))
}

func (c *conn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebindCached(q))
}

func (c *conn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebindCached(q), args)
}

func (c *conn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebindCached(q), args)
}

// CheckNamedValue binds a bool as 1 or 0 and anything else as pgx does.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	switch v := nv.Value.(type) {
	case bool:
		nv.Value = int64(0)
		if v {
			nv.Value = int64(1)
		}
		return nil
	case *bool:
		if v != nil {
			nv.Value = int64(0)
			if *v {
				nv.Value = int64(1)
			}
		}
		return nil
	}
	return c.Conn.CheckNamedValue(nv)
}
