package pg

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lockJobClass is the first half of a job's advisory lock key; the second
// is the hash of the job's name.
const lockJobClass int32 = 0x6b61 // "ka"

// Once runs fn for job's tick once across every hub on the database: the
// hub that takes the job's advisory lock (the others skip at once, never
// queue) and finds the tick not yet run records it and runs fn in the same
// transaction. If fn fails, nothing of it is kept and the tick stays to be
// run by the next hub that tries. It reports whether fn ran here.
func Once(ctx context.Context, pool *pgxpool.Pool, job string, tick time.Time, fn func(pgx.Tx) error) (bool, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx)
	var mine bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, hashtext($2))`, lockJobClass, job).Scan(&mine); err != nil || !mine {
		return false, err
	}
	tag, err := tx.Exec(ctx, `INSERT INTO job_ticks (job, last_tick) VALUES ($1, $2)
		ON CONFLICT (job) DO UPDATE SET last_tick = EXCLUDED.last_tick WHERE job_ticks.last_tick < EXCLUDED.last_tick`, job, tick)
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	if err := fn(tx); err != nil {
		return false, err
	}
	return true, tx.Commit(ctx)
}
