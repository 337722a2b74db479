package pg

import (
	"context"
	"time"
)

// forgetLockout is how long a key's failures are remembered without a
// new one (ratelimit.Forget).
const forgetLockout = time.Hour

// Lockout is ratelimit.Lockout with its counts in the database: every hub
// counts a key's failures together, by the database's clock.
type Lockout struct {
	DB    Querier
	Delay func(failures int) time.Duration // kassa.LockoutDelay
}

// Locked returns how long key stays locked (0: not locked).
func (l Lockout) Locked(ctx context.Context, key string) (time.Duration, error) {
	var left time.Duration
	err := l.DB.QueryRow(ctx, `SELECT coalesce((SELECT greatest(until - statement_timestamp(), '0s') FROM lockouts WHERE key = $1), '0s')`, key).Scan(&left)
	return left, err
}

// Fail records a failure of key and returns how long key is now locked:
// the count goes up in one statement on the key's row (two hubs failing
// at once count two), and the lock only ever lengthens.
func (l Lockout) Fail(ctx context.Context, key string) (time.Duration, error) {
	var failures int
	err := l.DB.QueryRow(ctx, `INSERT INTO lockouts AS k (key, failures, last, until) VALUES ($1, 1, statement_timestamp(), statement_timestamp())
		ON CONFLICT (key) DO UPDATE SET last = greatest(k.last, statement_timestamp()),
			failures = CASE WHEN k.last < statement_timestamp() - $2::interval THEN 1 ELSE k.failures + 1 END
		RETURNING failures`, key, forgetLockout).Scan(&failures)
	if err != nil {
		return 0, err
	}
	d := l.Delay(failures)
	_, err = l.DB.Exec(ctx, `UPDATE lockouts SET until = greatest(until, statement_timestamp() + $2::interval) WHERE key = $1`, key, d)
	return d, err
}

// Reset forgets key's failures (after a success).
func (l Lockout) Reset(ctx context.Context, key string) error {
	_, err := l.DB.Exec(ctx, `DELETE FROM lockouts WHERE key = $1`, key)
	return err
}

// SweepLockouts drops the keys whose last failure is older than an hour
// and that are not locked: a retention sweep's work (run it under Once).
func SweepLockouts(ctx context.Context, q Querier) (int64, error) {
	tag, err := q.Exec(ctx, `DELETE FROM lockouts WHERE last < statement_timestamp() - $1::interval AND until <= statement_timestamp()`, forgetLockout)
	return tag.RowsAffected(), err
}
