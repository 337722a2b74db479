package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

// A store restored from a backup lacks the changes its node made after the
// backup. An edge pushed those to its hub before it was lost, and the hub
// leaves an edge's own changes out of what the edge pulls: so a restored
// edge asks for its own changes too until it has caught up with the hub's
// log, and applies the ones it lacks. OwnResync says which those are.

// metaResyncOwn holds the OwnResync of a restored store ("" when none).
const MetaResyncOwn = "sync_resync_own"

// OwnResync marks the node's own changes a restored store lacks: those
// stamped after the newest own change in the backup (HLC) and not made
// since the restore (outbox positions after Seq).
type OwnResync struct {
	HLC hlc.Timestamp
	Seq int64
}

// lost reports whether c, a change of this node, is missing from the
// store (nil o: never). Own changes get increasing stamps, so the backup
// holds every one up to o.HLC.
func (o *OwnResync) lost(ctx context.Context, tx *Tx, c *change.Change) (bool, error) {
	if o == nil || c.HLC.Compare(o.HLC) <= 0 {
		return false, nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM outbox WHERE seq > ? AND id = ?) + (SELECT count(*) FROM applied_changes WHERE id = ?)`,
		o.Seq, c.ID, c.ID).Scan(&n); err != nil {
		return false, err
	}
	return n == 0, nil
}

// Resync returns the store's OwnResync, or nil when it is not catching up
// after a restore.
func (db *DB) Resync(ctx context.Context) (*OwnResync, error) {
	v, err := db.Meta(ctx, MetaResyncOwn)
	if err != nil || v == "" {
		return nil, err
	}
	ts, seq, ok := strings.Cut(v, " ")
	o := &OwnResync{}
	if o.HLC, err = hlc.Parse(ts); err != nil || !ok {
		return nil, fmt.Errorf("sqlite: bad %s %q", MetaResyncOwn, v)
	}
	if o.Seq, err = strconv.ParseInt(seq, 10, 64); err != nil {
		return nil, fmt.Errorf("sqlite: bad %s %q", MetaResyncOwn, v)
	}
	return o, nil
}

// EndResync records that the restored store caught up with its hub.
func (db *DB) EndResync(ctx context.Context) error { return db.SetMeta(ctx, MetaResyncOwn, "") }

// The hub's log epoch: a restored hub's log may lack what edges pushed
// after its backup, and its positions restart below the edges' cursors.
// The epoch names the log; a restore gives it a new one, and an edge that
// sees it change pulls from the start and pushes its outbox again.
const (
	metaLogEpoch = "log_epoch"      // at the hub: its log's epoch
	metaHubEpoch = "sync_hub_epoch" // at an edge: the hub's epoch it saw last
	metaCursor   = MetaPullCursor
)

// MetaPullCursor is the node_meta key of an edge's position in its hub's log.
const MetaPullCursor = "sync_pull_cursor"

// LogEpoch returns the epoch of this node's log, making one at first.
func (db *DB) LogEpoch(ctx context.Context) (string, error) {
	v, err := db.Meta(ctx, metaLogEpoch)
	if err != nil || v != "" {
		return v, err
	}
	return db.NewLogEpoch(ctx)
}

// NewLogEpoch gives this node's log a new epoch (a restored hub).
func (db *DB) NewLogEpoch(ctx context.Context) (string, error) {
	v := db.NewID()
	return v, db.SetMeta(ctx, metaLogEpoch, v)
}

// HubEpoch returns the epoch of the hub's log an edge saw last ("": none).
func (db *DB) HubEpoch(ctx context.Context) (string, error) { return db.Meta(ctx, metaHubEpoch) }

// SetHubEpoch records the hub's epoch at an edge; with restored it also
// moves the pull cursor to the start and marks every outbox record
// unsent, in one unit.
func (db *DB) SetHubEpoch(ctx context.Context, epoch string, restored bool) error {
	return db.Write(ctx, func(tx *Tx) error {
		set := `INSERT INTO node_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`
		if restored {
			if _, err := tx.ExecContext(ctx, `UPDATE outbox SET sent_at = NULL WHERE sent_at IS NOT NULL`); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, set, metaCursor, "0"); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, set, metaHubEpoch, epoch)
		return err
	})
}
