package sqlite

import (
	"database/sql"
	"time"

	"kassa.dev/shared/kassa"
)

// Small value helpers the resource files share.

// optPtr is an update's value as a nullable column: nil when the update
// leaves it out or sets null.
func optPtr[T any](o kassa.Opt[T]) *T {
	if !o.Set || o.Null {
		return nil
	}
	v := o.Value
	return &v
}

// orEmpty stores a nil list as [] (never null).
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// dedupe drops repeated ids, keeping the first of each; never nil.
func dedupe(ids []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// orEmptyMap stores a nil object as {} (never null).
func orEmptyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// truncMilli is t in UTC to the millisecond, as the store keeps times.
func truncMilli(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Truncate(time.Millisecond)
	return &u
}

// nullPtr is a nullable column's value, or nil for NULL.
func nullPtr[T any](n sql.Null[T]) *T {
	if !n.Valid {
		return nil
	}
	return &n.V
}

// nullTime reads a nullable timestamp column.
func nullTime(s sql.NullString) *time.Time {
	if !s.Valid {
		return nil
	}
	t := parseTime(s.String)
	return &t
}
