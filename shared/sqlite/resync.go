package sqlite

import (
	"context"
	"strconv"

	"kassa.dev/sync/hlc"
)

// OrderNumberGap is how far a restore moves the store's order counters
// ahead, so that a sale made before the edge got its own lost orders back
// cannot take one of their numbers.
const OrderNumberGap = 10000

// MarkRestored readies a store just restored from a backup: it records
// the OwnResync its first pulls use and moves the order counters ahead by
// OrderNumberGap. The node must not be running.
func (db *DB) MarkRestored(ctx context.Context) error {
	var last string
	var seq int64
	if err := db.Writer.QueryRowContext(ctx, `SELECT coalesce(max(hlc), ''), coalesce(max(seq), 0) FROM outbox WHERE origin = ?`, db.NodeID).Scan(&last, &seq); err != nil {
		return err
	}
	if err := db.Exec(ctx, `UPDATE order_counters SET next = next + ?`, OrderNumberGap); err != nil {
		return err
	}
	var all int64
	if err := db.Writer.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM outbox`).Scan(&all); err != nil {
		return err
	}
	if last == "" {
		last = hlc.Timestamp{}.String()
	}
	return db.SetMeta(ctx, metaResyncOwn, last+" "+strconv.FormatInt(all, 10))
}
