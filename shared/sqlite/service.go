package sqlite

import "context"

// finder reads one row of an org by its id, on the writer's unit (tx) or
// the reader.
type finder[T any] func(ctx context.Context, q querier, orgID, id string) (*T, error)

// writeRead is the shape of a service's create or update: write runs in one
// unit of work, then row id of orgID is read back on the reader, as the
// caller sees it after the commit. An error of write comes back as it is.
func writeRead[T any](ctx context.Context, db *DB, find finder[T], orgID, id string, write func(tx *Tx) error) (*T, error) {
	if err := db.write(ctx, write); err != nil {
		return nil, err
	}
	return find(ctx, db.reader, orgID, id)
}
