package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"slices"
	"strings"

	"kassa.dev/shared/kassa"
)

// Cursors are opaque to clients: base64url of "v1:" and the last id of the
// page. Lists are ordered by id, and ids are UUIDv7, so that is creation order.

func encodeCursor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1:" + id))
}

func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	id, ok := strings.CutPrefix(string(b), "v1:")
	if err != nil || !ok || !kassa.ValidID(id) {
		return "", kassa.Errorf(kassa.EBadRequest, "cursor is not valid")
	}
	return id, nil
}

// scanner is what *sql.Row and *sql.Rows share.
type scanner interface{ Scan(dest ...any) error }

// filter is a list query's WHERE clause: the caller's org first, then a
// condition for each filter the request gave.
type filter struct {
	where string
	args  []any
	desc  bool // newest first: ORDER BY id DESC, the cursor pages backwards
}

// orgFilter starts the clause of a list of orgID's rows.
func orgFilter(orgID string) *filter { return &filter{where: "org_id = ?", args: []any{orgID}} }

// and adds a condition with its arguments.
func (f *filter) and(cond string, args ...any) *filter {
	f.where += " AND " + cond
	f.args = append(f.args, args...)
	return f
}

// eq adds "col = v" when the request gave v (as the column stores it).
func eq[T any](f *filter, col string, v *T) {
	if v != nil {
		f.and(col+" = ?", columnValue(*v))
	}
}

// eqText adds "col = v" unless v is empty.
func (f *filter) eqText(col, v string) {
	if v != "" {
		f.and(col+" = ?", v)
	}
}

// findPage runs "SELECT cols FROM table WHERE <filter> [AND id > cursor]
// ORDER BY id LIMIT limit+1" (id < cursor, ORDER BY id DESC for a desc
// filter) and scans one page.
func findPage[T any](ctx context.Context, q querier, selectFrom string, f *filter, p kassa.Page, scan func(scanner) (*T, error), idOf func(*T) string) (kassa.List[T], error) {
	var out kassa.List[T]
	where, args := f.where, slices.Clone(f.args)
	cmp, order := ">", ""
	if f.desc {
		cmp, order = "<", " DESC"
	}
	limit := p.Limit
	if limit <= 0 {
		limit = kassa.DefaultLimit
	}
	if p.Cursor != "" {
		after, err := decodeCursor(p.Cursor)
		if err != nil {
			return out, err
		}
		where += " AND id " + cmp + " ?"
		args = append(args, after)
	}
	args = append(args, limit+1)
	rows, err := q.QueryContext(ctx, selectFrom+" WHERE "+where+" ORDER BY id"+order+" LIMIT ?", args...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	out.Items = []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, *v)
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	if len(out.Items) > limit {
		out.Items = out.Items[:limit]
		out.HasMore = true
		out.NextCursor = encodeCursor(idOf(&out.Items[limit-1]))
	}
	return out, nil
}

// findByID reads one row of the org by id with the given SELECT ... FROM
// and scanner; a row that does not exist (or is another org's) is the
// resource's ENotFound.
func findByID[T any](ctx context.Context, q querier, selectFrom, resource, orgID, id string, scan func(scanner) (*T, error)) (*T, error) {
	v, err := scan(q.QueryRowContext(ctx, selectFrom+` WHERE org_id = ? AND id = ?`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound(resource, id)
	}
	return v, err
}
