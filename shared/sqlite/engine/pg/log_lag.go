package pg

import (
	"context"
	"time"
)

// LogLag is how long the oldest record of a committed transaction that has
// no position yet has waited, since its unit was written (the hub's time then; 0: none): what
// a long-running transaction holds back from the edges' pulls (the log is
// positioned only below the oldest running transaction), the issue's "log
// lag in seconds". A transaction still running is not counted (it has no
// outbox_commits row until it commits).
func LogLag(ctx context.Context, q Querier) (time.Duration, error) {
	var lag time.Duration
	err := q.QueryRow(ctx, `SELECT coalesce(greatest(statement_timestamp() - min(o.created_at), '0s'), '0s')
		FROM outbox_commits c JOIN outbox_log o ON o.xid = c.xid AND o.ord = 0 WHERE c.last_pos IS NULL`).Scan(&lag)
	return lag, err
}
