package pg

import (
	"context"
	"time"
)

// Rate is a bucket's refill (tokens a minute) and size.
type Rate struct {
	PerMinute, Burst int
}

// Taken is the outcome of one Take, as ratelimit.Result has it.
type Taken struct {
	Allowed    bool
	Remaining  int           // whole tokens left
	RetryAfter time.Duration // when not allowed: until one token is back
}

// Take spends one token of key's bucket, shared by every hub on the
// database, if there is one: refill by the time passed (the database's
// clock), take, and record, in one statement on the key's row, so two
// hubs taking at once queue on the row and a limit counts once across the
// cluster. A new key starts with a full bucket.
func Take(ctx context.Context, q Querier, key string, r Rate) (Taken, error) {
	perSecond := float64(r.PerMinute) / 60
	var tokens float64
	var t Taken
	// refilled is the bucket at this statement's time: one clock reading
	// (statement_timestamp), never less than the last take's, so a take
	// that waited on the row for another hub's never goes back in time.
	const refilled = `least($3::float8, b.tokens + greatest(0, extract(epoch FROM statement_timestamp() - b.at))::float8 * $2::float8)`
	err := q.QueryRow(ctx, `INSERT INTO rate_buckets AS b (key, tokens, at, allowed)
		VALUES ($1, $3::float8 - CASE WHEN $3::float8 >= 1 THEN 1 ELSE 0 END, statement_timestamp(), $3::float8 >= 1)
		ON CONFLICT (key) DO UPDATE SET
			tokens = `+refilled+` - CASE WHEN `+refilled+` >= 1 THEN 1 ELSE 0 END,
			allowed = `+refilled+` >= 1,
			at = greatest(b.at, statement_timestamp())
		RETURNING tokens, allowed`, key, perSecond, float64(r.Burst)).Scan(&tokens, &t.Allowed)
	if err != nil {
		return Taken{}, err
	}
	t.Remaining = max(int(tokens), 0)
	if !t.Allowed {
		t.RetryAfter = time.Hour
		if perSecond > 0 {
			t.RetryAfter = time.Duration((1 - tokens) / perSecond * float64(time.Second))
		}
	}
	return t, nil
}
