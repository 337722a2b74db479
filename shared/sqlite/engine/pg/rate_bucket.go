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

// refilled is a bucket at this statement's time ($2 tokens a second, $3
// the burst): one clock reading (statement_timestamp), never before the
// last take's, so a take that waited on the row for another hub's never
// goes back in time.
const refilled = `least($3::float8, b.tokens + greatest(0, extract(epoch FROM statement_timestamp() - b.at))::float8 * $2::float8)`

// Take spends one token of key's bucket, shared by every hub on the
// database, if there is one: refill by the time passed (the database's
// clock), take, and record, in one statement on the key's row, so two
// hubs taking at once queue on the row and a limit counts once across the
// cluster. A new key starts with a full bucket.
func Take(ctx context.Context, q Querier, key string, r Rate) (Taken, error) {
	return spend(ctx, q, key, r, 1, false)
}

// Spend takes n more tokens after a request Take allowed turned out to
// cost more (ratelimit.Limiter.Spend): the bucket may go below zero, and
// the requests that follow wait until it has refilled past one.
func Spend(ctx context.Context, q Querier, key string, r Rate, n int) (Taken, error) {
	t, err := spend(ctx, q, key, r, max(n, 0), true)
	t.Allowed, t.RetryAfter = true, 0
	return t, err
}

// spend takes cost tokens if one is there, or always.
func spend(ctx context.Context, q Querier, key string, r Rate, cost int, always bool) (Taken, error) {
	var tokens float64
	var allowed bool
	err := q.QueryRow(ctx, `INSERT INTO rate_buckets AS b (key, tokens, at, allowed)
		VALUES ($1, $3::float8 - CASE WHEN $5 OR $3::float8 >= 1 THEN $4::float8 ELSE 0 END, statement_timestamp(), $5 OR $3::float8 >= 1)
		ON CONFLICT (key) DO UPDATE SET
			tokens = `+refilled+` - CASE WHEN $5 OR `+refilled+` >= 1 THEN $4::float8 ELSE 0 END,
			allowed = $5 OR `+refilled+` >= 1,
			at = greatest(b.at, statement_timestamp())
		RETURNING tokens, allowed`, key, r.perSecond(), float64(r.Burst), float64(cost), always).Scan(&tokens, &allowed)
	if err != nil {
		return Taken{}, err
	}
	return r.taken(tokens, allowed), nil
}

// Peek reports what Take would answer for key without spending a token.
func Peek(ctx context.Context, q Querier, key string, r Rate) (Taken, error) {
	var tokens float64
	err := q.QueryRow(ctx, `SELECT coalesce((SELECT `+refilled+` FROM rate_buckets b WHERE key = $1), $3::float8)`,
		key, r.perSecond(), float64(r.Burst)).Scan(&tokens)
	if err != nil {
		return Taken{}, err
	}
	return r.taken(tokens, tokens >= 1), nil
}

func (r Rate) perSecond() float64 { return float64(r.PerMinute) / 60 }

// taken is the outcome with tokens left in the bucket.
func (r Rate) taken(tokens float64, allowed bool) Taken {
	t := Taken{Allowed: allowed, Remaining: max(int(tokens), 0)}
	if !allowed {
		t.RetryAfter = time.Hour
		if ps := r.perSecond(); ps > 0 {
			t.RetryAfter = time.Duration((1 - tokens) / ps * float64(time.Second))
		}
	}
	return t
}

// TakeOrg is Take (cost 1) or Spend (always, cost n) on org's bucket at the
// org's own rate — its tenants row's, else def — in one statement, one
// round trip: the rate is read and the bucket taken together. It answers
// the rate it used.
func TakeOrg(ctx context.Context, q Querier, key, org string, def Rate, cost int, always bool) (Taken, Rate, error) {
	var tokens float64
	var allowed bool
	var r Rate
	err := q.QueryRow(ctx, `WITH r AS (SELECT coalesce(t.pm, $2::int) AS pm, coalesce(t.burst, $3::int) AS burst
			FROM (SELECT 1) AS one LEFT JOIN (SELECT rate_per_minute AS pm, rate_burst AS burst FROM tenants
				WHERE org_id = $6 AND rate_per_minute IS NOT NULL AND rate_burst IS NOT NULL) AS t ON true)
		INSERT INTO rate_buckets AS b (key, tokens, at, allowed)
		SELECT $1, r.burst::float8 - CASE WHEN $5 OR r.burst >= 1 THEN $4::float8 ELSE 0 END, statement_timestamp(), $5 OR r.burst >= 1 FROM r
		ON CONFLICT (key) DO UPDATE SET
			tokens = `+orgRefilled+` - CASE WHEN $5 OR `+orgRefilled+` >= 1 THEN $4::float8 ELSE 0 END,
			allowed = $5 OR `+orgRefilled+` >= 1,
			at = greatest(b.at, statement_timestamp())
		RETURNING tokens, allowed, (SELECT pm FROM r), (SELECT burst FROM r)`,
		key, def.PerMinute, def.Burst, float64(cost), always, org).Scan(&tokens, &allowed, &r.PerMinute, &r.Burst)
	if err != nil {
		return Taken{}, def, err
	}
	t := r.taken(tokens, allowed)
	if always {
		t.Allowed, t.RetryAfter = true, 0
	}
	return t, r, nil
}

// orgRefilled is refilled at the rate TakeOrg's r read.
const orgRefilled = `least((SELECT burst FROM r)::float8, b.tokens + greatest(0, extract(epoch FROM statement_timestamp() - b.at))::float8 * (SELECT pm FROM r)::float8 / 60)`
