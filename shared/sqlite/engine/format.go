package engine

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"kassa.dev/sync/change"
)

// Schema is the replicated schema of one change-record format: the
// replicated tables that exist in it and their columns, in table order.
type Schema struct {
	Format  int
	Columns map[string][]string        // table → columns
	known   map[string]map[string]bool // table → column set
}

var schemas struct {
	sync.Mutex
	byFormat map[int]*Schema
}

// SchemaOf returns the replicated schema of a change-record format, built
// once per process.
func SchemaOf(ctx context.Context, format int) (*Schema, error) {
	m, ok := FormatMigrations()[format]
	if !ok {
		return nil, fmt.Errorf("sqlite: unknown change-record format %d", format)
	}
	schemas.Lock()
	defer schemas.Unlock()
	if s := schemas.byFormat[format]; s != nil {
		return s, nil
	}
	s, err := SchemaAt(ctx, m)
	if err != nil {
		return nil, err
	}
	s.Format = format
	if schemas.byFormat == nil {
		schemas.byFormat = map[int]*Schema{}
	}
	schemas.byFormat[format] = s
	return s, nil
}

// schemaAt migrates a scratch in-memory store up to migration last and
// reads the replicated tables' columns off it.
func SchemaAt(ctx context.Context, last int) (*Schema, error) {
	db, err := sql.Open(DriverName, "file::memory:?_foreign_keys=1")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	names, err := fs.Glob(Migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	for _, name := range names {
		if MigrationNumber(name) > last {
			break
		}
		body, err := fs.ReadFile(Migrations, name)
		if err != nil {
			return nil, err
		}
		if _, err := db.ExecContext(ctx, string(body)); err != nil {
			return nil, fmt.Errorf("sqlite: schema at %s: %w", name, err)
		}
	}
	s := &Schema{Columns: map[string][]string{}, known: map[string]map[string]bool{}}
	for _, table := range ReplicatedTables() {
		rows, err := db.QueryContext(ctx, D(db).ColumnsSQL(), table)
		if err != nil {
			return nil, err
		}
		var cols []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return nil, err
			}
			cols = append(cols, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if len(cols) == 0 {
			continue // not there yet at that migration
		}
		s.Columns[table] = cols
		s.known[table] = make(map[string]bool, len(cols))
		for _, c := range cols {
			s.known[table][c] = true
		}
	}
	return s, nil
}

// migrationNumber reads the number a migration file's name starts with.
func MigrationNumber(name string) int {
	n, _ := strconv.Atoi(strings.SplitN(path.Base(name), "_", 2)[0])
	return n
}

// replicatedTables lists the tables of the registered nouns, sorted.
func ReplicatedTables() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range Nouns {
		if !seen[n.Table] {
			seen[n.Table] = true
			out = append(out, n.Table)
		}
	}
	sort.Strings(out)
	return out
}

// Downgrade returns c as an edge of this schema's format can apply it:
// without the fields its tables lack. It reports false when that edge
// cannot hold c at all (an entity its store has no table for) or when
// nothing of an update is left: the hub leaves such a record out of what
// it serves that edge.
func (s *Schema) Downgrade(c change.Change) (change.Change, bool) {
	r, ok := NounOf(c.Entity)
	if !ok {
		return c, false
	}
	known := s.known[r.Table]
	if known == nil {
		return c, false
	}
	var fields map[string]any
	for k := range c.Fields {
		if !known[k] {
			if fields == nil { // copy on first removal: c.Fields may be shared
				fields = make(map[string]any, len(c.Fields))
				for k, v := range c.Fields {
					fields[k] = v
				}
			}
			delete(fields, k)
		}
	}
	if fields != nil {
		c.Fields = fields
		if len(fields) == 0 && c.Op == change.OpUpdate {
			return c, false
		}
	}
	return c, true
}
