package sqlite

// Helpers every resource file uses for its queries: the querier that both
// a unit of work and the reader are, checks that referenced rows exist,
// LIKE escaping, and the write-then-read shape of a create or update.
// Paging and finding one row by id are in page.go.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
)

// finder reads one row of an org by its id, on the writer's unit (tx) or
// the reader.
type finder[T any] func(ctx context.Context, q querier, orgID, id string) (*T, error)

// readOwn reads row id of the actor's org on the reader: what a service's
// FindXByID does. Errors: EUnauthorized without an actor, ENotFound.
func readOwn[T any](ctx context.Context, db *DB, find finder[T], id string) (*T, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	return find(ctx, db.Reader, a.OrgID, id)
}

// writeRead is the shape of a service's create or update: write runs in one
// unit of work, then row id of orgID is read back on the reader, as the
// caller sees it after the commit. An error of write comes back as it is.
func writeRead[T any](ctx context.Context, db *DB, find finder[T], orgID, id string, write func(tx *Tx) error) (*T, error) {
	if err := db.Write(ctx, write); err != nil {
		return nil, err
	}
	return find(ctx, db.Reader, orgID, id)
}

// exists reports whether table has a row id in org.
func exists(ctx context.Context, q querier, table, orgID, id string) bool {
	var n int
	err := q.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE org_id = ? AND id = ?", orgID, id).Scan(&n)
	return err == nil && n == 1
}

// checkExist checks that every id names a row of table in the org; the first
// that does not is reported as field with message (formatted with the id).
func checkExist(ctx context.Context, q querier, table, orgID, field, message string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	var missing string
	err = q.QueryRowContext(ctx, `SELECT j.value FROM `+engine.D(q).JSONValues("?", "j")+` WHERE j.value NOT IN (SELECT id FROM `+table+` WHERE org_id = ?) LIMIT 1`,
		string(list), orgID).Scan(&missing)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return kassa.InvalidField(field, fmt.Sprintf(message, missing))
}

// escapeLike escapes s for a LIKE pattern with ESCAPE '\'.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// updateRead is writeRead for a partial update of one row: in the unit,
// the row is read (ENotFound), diff notes in cols the columns that change
// (and checks what needs the unit), and those are written; then the row is
// read back on the reader. An update that changes nothing writes nothing.
func updateRead[T any](ctx context.Context, db *DB, e entity, find finder[T], orgID, id string, diff func(tx *Tx, old *T, cols map[string]any) error) (*T, error) {
	return writeRead(ctx, db, find, orgID, id, func(tx *Tx) error {
		old, err := find(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		cols := map[string]any{}
		if err := diff(tx, old, cols); err != nil {
			return err
		}
		return tx.Update(ctx, e, orgID, id, cols)
	})
}

// updateEmit is updateRead for an org-wide resource with an event: when
// the update changes a column it emits event with the row as the unit
// leaves it (the resource in its API shape); an update that changes
// nothing writes and emits nothing.
func updateEmit[T any](ctx context.Context, db *DB, e entity, event string, find finder[T], orgID, id string, diff func(tx *Tx, old *T, cols map[string]any) error) (*T, error) {
	return updateEmitAs(ctx, db, e, func(map[string]any) string { return event }, find, find, orgID, id, diff)
}

// updateEmitAs is updateEmit with the event named by eventOf from the
// changed columns, and its data (and the result) read by show.
func updateEmitAs[T any](ctx context.Context, db *DB, e entity, eventOf func(cols map[string]any) string, find, show finder[T], orgID, id string,
	diff func(tx *Tx, old *T, cols map[string]any) error) (*T, error) {
	var out *T
	err := db.Write(ctx, func(tx *Tx) error {
		old, err := find(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		cols := map[string]any{}
		if err := diff(tx, old, cols); err != nil {
			return err
		}
		if len(cols) == 0 {
			out, err = show(ctx, tx, orgID, id)
			return err
		}
		if err := tx.Update(ctx, e, orgID, id, cols); err != nil {
			return err
		}
		return emitRead(ctx, tx, show, orgID, id, eventOf(cols), &out)
	})
	return out, err
}

// emitRead reads the org-wide resource id as the unit has written it into
// *out and emits event with it as data.
func emitRead[T any](ctx context.Context, tx *Tx, find finder[T], orgID, id, event string, out **T) error {
	v, err := find(ctx, tx, orgID, id)
	if err != nil {
		return err
	}
	*out = v
	tx.Emit(orgID, "", event, v)
	return nil
}
