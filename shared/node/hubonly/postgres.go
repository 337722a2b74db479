package hubonly

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/ratelimit"
	"kassa.dev/shared/sqlite"
	"kassa.dev/shared/sqlite/engine/pg"
)

// The hub's store may be PostgreSQL (--store postgres://…): the backend
// registers in hub-only code, which the edge's binary never links
// (TestTheEdgeBinaryLinksNoHubOnlyCode), and inside shared/node, the one
// holder of the store (TestOnlyTheNodeImportsTheStore).
func init() { pg.Register(sqlite.PostgresMigrations) }

// sharedTimeout bounds one statement of the shared throttles: a request
// waits no longer than this on the database for its budget.
const sharedTimeout = 2 * time.Second

// isPostgres reports whether the node's store is a PostgreSQL URL.
func isPostgres(store string) bool {
	return strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://")
}

// sharePostgres gives a hub on PostgreSQL the throttles every hub on the
// database shares: the orgs' request buckets (httpapi.OrgLimiter), the
// login throttle per address and the login lockouts. It returns the pool
// (nil on SQLite), closed when the node stops.
func sharePostgres(ctx context.Context, n *node.Node) (*pgxpool.Pool, error) {
	if !isPostgres(n.Config.Store) {
		return nil, nil
	}
	pool, err := pgxpool.New(ctx, n.Config.Store)
	if err != nil {
		return nil, err
	}
	n.Jobs.OnStop("postgres pool", pool.Close)
	n.Config.Once = pgOnce{pool}.Once
	log := n.Log()
	if n.Config.RatePerMinute > 0 {
		n.Config.OrgLimiter = &pgLimiter{pool: pool, prefix: "org:", log: log, tenants: true,
			def: pg.Rate{PerMinute: n.Config.RatePerMinute, Burst: max(n.Config.RateBurst, 1)}}
	}
	if auth, ok := n.Services.Auth.(*sqlite.AuthService); ok {
		ip := &pgLimiter{pool: pool, prefix: "login-ip:", log: log,
			def: pg.Rate{PerMinute: n.Config.LoginIPPerMinute, Burst: n.Config.LoginIPBurst}}
		auth.ShareThrottles(ip, pgLockout{l: pg.Lockout{DB: pool, Delay: kassa.LockoutDelay}, log: log})
	}
	return pool, nil
}

// pgLimiter is ratelimit.Limiter's Take, Spend and SetLimit on the
// database's buckets (pg.Take): a key's requests count once across the
// hubs. With tenants, a key is an org whose own limit is read from its
// tenants row at each take, so a limit set at one hub holds at every hub
// at once (SetLimit has nothing to do). A database that does not answer
// lets the request through (logged): the request meets the same database
// next and fails there with a clear answer, rather than a 429 that blames
// the org.
type pgLimiter struct {
	pool    *pgxpool.Pool
	prefix  string
	def     pg.Rate
	tenants bool
	log     *slog.Logger
}

var _ httpapi.OrgLimiter = (*pgLimiter)(nil)

func (l *pgLimiter) Take(key string) ratelimit.Result {
	return l.spend(key, 0)
}

func (l *pgLimiter) Spend(key string, n int) ratelimit.Result {
	return l.spend(key, max(n, 0))
}

// SetLimit does nothing: the org's own limit is its tenants row's.
func (l *pgLimiter) SetLimit(string, int, int) {}

// spend takes one token (n 0) or spends n after the fact.
func (l *pgLimiter) spend(key string, n int) ratelimit.Result {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	if l.tenants {
		t, r, err := pg.TakeOrg(ctx, l.pool, l.prefix+key, key, l.def, max(n, 1), n > 0)
		return l.result(t, r, err)
	}
	r, err := l.rate(ctx, key)
	var t pg.Taken
	if err == nil && n == 0 {
		t, err = pg.Take(ctx, l.pool, l.prefix+key, r)
	} else if err == nil {
		t, err = pg.Spend(ctx, l.pool, l.prefix+key, r, n)
	}
	return l.result(t, r, err)
}

// result is the outcome of a take at rate r, or a request let through when
// the database did not answer.
func (l *pgLimiter) result(t pg.Taken, r pg.Rate, err error) ratelimit.Result {
	if err != nil {
		l.log.Warn("the shared rate limit is unavailable; the request goes through", "bucket", l.prefix, "err", err)
		return ratelimit.Result{Allowed: true, Limit: r.PerMinute, Remaining: r.Burst}
	}
	return ratelimit.Result{Allowed: t.Allowed, Limit: r.PerMinute, Remaining: t.Remaining, RetryAfter: t.RetryAfter}
}

// rate is key's own rate (an org's tenants row) or the default.
func (l *pgLimiter) rate(ctx context.Context, key string) (pg.Rate, error) {
	if !l.tenants {
		return l.def, nil
	}
	var r pg.Rate
	err := l.pool.QueryRow(ctx, `SELECT rate_per_minute, rate_burst FROM tenants
		WHERE org_id = $1 AND rate_per_minute IS NOT NULL AND rate_burst IS NOT NULL`, key).Scan(&r.PerMinute, &r.Burst)
	if errors.Is(err, pgx.ErrNoRows) {
		return l.def, nil
	}
	return r, err
}

// pgLockout is ratelimit.Lockout's methods on pg.Lockout: a key's failed
// logins count once across the hubs. The row's key is the SHA-256 of the
// login's (an e-mail, a NUL, an address: PostgreSQL's text holds no NUL,
// and the table keeps no e-mail). A database that does not answer locks
// nothing (logged): the login itself reads the same database next.
type pgLockout struct {
	l   pg.Lockout
	log *slog.Logger
}

var _ sqlite.LoginLockout = pgLockout{}

func (p pgLockout) Locked(key string) time.Duration {
	return p.do("locked", func(ctx context.Context) (time.Duration, error) { return p.l.Locked(ctx, rowKey(key)) })
}

func (p pgLockout) Fail(key string) time.Duration {
	return p.do("fail", func(ctx context.Context) (time.Duration, error) { return p.l.Fail(ctx, rowKey(key)) })
}

func (p pgLockout) Reset(key string) {
	p.do("reset", func(ctx context.Context) (time.Duration, error) { return 0, p.l.Reset(ctx, rowKey(key)) })
}

// do runs one lockout statement under sharedTimeout.
func (p pgLockout) do(what string, fn func(context.Context) (time.Duration, error)) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	d, err := fn(ctx)
	if err != nil {
		p.log.Warn("the shared login lockout is unavailable", "step", what, "err", err)
	}
	return d
}

// rowKey is the lockouts row of a login's key.
func rowKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// pgClaims claims an endpoint's due deliveries in the database
// (pg.ClaimDeliveries: FOR UPDATE SKIP LOCKED, a lease by the database's
// clock), so hubs sharing one PostgreSQL send each delivery once. The
// lease outlasts a claim's batch sent to an endpoint that times out on
// every POST; a hub that dies leaves its claims to end with their lease.
type pgClaims struct {
	pool  *pgxpool.Pool
	batch int // at most this many deliveries a claim
	lease time.Duration
}

// pgWebhookClaim is how many deliveries a hub on PostgreSQL claims at
// once: the lease covers them all, and a hub that dies holding a claim
// delays those deliveries until the lease ends — with the default POST
// timeout (10 s) 30 s, where a claim of webhookBatch would hold them for
// five and a half minutes. The sender claims again at once after a full
// claim, so a claim's round trip per two POSTs is all it costs.
const pgWebhookClaim = 2

func (c pgClaims) Due(ctx context.Context, endpoint string, now time.Time, limit int) ([]sqlite.WebhookDelivery, error) {
	ds, err := pg.ClaimDeliveries(ctx, c.pool, endpoint, now, c.lease, min(limit, c.batch))
	out := make([]sqlite.WebhookDelivery, len(ds))
	for i, d := range ds {
		out[i] = sqlite.WebhookDelivery{ID: d.ID, EventID: d.EventID, Event: d.Event, Body: d.Body, Attempts: d.Attempts,
			WebhookTarget: sqlite.WebhookTarget{EndpointID: d.EndpointID, OrgID: d.OrgID, URL: d.URL, Secret: d.Secret}}
	}
	return out, err
}

func (c pgClaims) Release(ctx context.Context, ids []string) error {
	return pg.ReleaseDeliveries(ctx, c.pool, ids)
}

// pgOnce is node.Config.Once on PostgreSQL: pg.Once takes the job's
// advisory lock and records its tick, and the job runs while it holds them
// (on the store's own connections: a sweep's rows are committed by the
// store, the tick with pg.Once's transaction; a sweep run twice after a
// failed tick commit deletes nothing more).
type pgOnce struct{ pool *pgxpool.Pool }

func (o pgOnce) Once(ctx context.Context, job string, tick time.Time, run func(context.Context) (int64, error)) (int64, bool, error) {
	s := &onceRun{ctx: ctx, run: run}
	here, err := pg.Once(ctx, o.pool, job, tick, s.in)
	return s.rows, here, err
}

// onceRun is one tick's run inside pg.Once, and its count.
type onceRun struct {
	ctx  context.Context
	run  func(context.Context) (int64, error)
	rows int64
}

func (s *onceRun) in(pgx.Tx) error {
	k, err := s.run(s.ctx)
	s.rows = k
	return err
}

// lockoutSweepEvery is how often the hubs drop the login lockouts
// forgotten (an hour without a failure, not locked).
const lockoutSweepEvery = time.Hour

// sweepLockouts is the login lockouts' sweep (pg.SweepLockouts).
func (h *Hub) sweepLockouts(ctx context.Context) (int64, error) { return pg.SweepLockouts(ctx, h.pool) }

// EdgeBookSaver is how the hub named hubID (its NATS server's name) writes
// its edge book on PostgreSQL: pg.SaveEdgeReports, each row with hub_id and
// seen_at, a newer word (the edge moved to another hub) never replaced.
// nil on SQLite: the store's own write.
func (h *Hub) EdgeBookSaver(hubID string) func(context.Context, []sqlite.EdgeReport) error {
	if h.pool == nil {
		return nil
	}
	return edgeBook{pool: h.pool, hub: hubID}.save
}

// EdgesHeard is how a hub on PostgreSQL reads when any hub last heard
// each edge (pg.EdgeHubs; node.Config.EdgesHeard). nil on SQLite.
func (h *Hub) EdgesHeard() func(context.Context) (map[string]time.Time, error) {
	if h.pool == nil {
		return nil
	}
	return func(ctx context.Context) (map[string]time.Time, error) {
		hubs, err := pg.EdgeHubs(ctx, h.pool)
		out := make(map[string]time.Time, len(hubs))
		for node, eh := range hubs {
			out[node] = eh.SeenAt
		}
		return out, err
	}
}

// edgeBook writes one hub's edge book entries to the shared table.
type edgeBook struct {
	pool *pgxpool.Pool
	hub  string
}

func (b edgeBook) save(ctx context.Context, rs []sqlite.EdgeReport) error {
	out := make([]pg.EdgeReport, len(rs))
	for i, r := range rs {
		out[i] = pg.EdgeReport{NodeID: r.NodeID, LastSeen: r.LastSeen, ConnectedSince: r.ConnectedSince, Cursor: r.Cursor,
			PendingUp: r.PendingUp, Version: r.Version, ReportedAt: r.ReportedAt, LastVerified: r.LastVerified,
			VerifyOK: r.VerifyOK, VerifyDiffer: r.VerifyDiffer, LagP50: r.LagP50, LagP99: r.LagP99}
	}
	return pg.SaveEdgeReports(ctx, b.pool, b.hub, out)
}

// lockAutomationTurn is the advisory lock of the automation engine's turn
// (pg.Once's class, a key of its own).
const lockAutomationTurn = "automation-turn"

// pgTurn is the automation engine's turn on PostgreSQL: a transaction
// that holds an advisory lock (tried, never queued) for the pass, ended
// by release; a hub that dies ends its turn with its connection.
type pgTurn struct{ pool *pgxpool.Pool }

func (p pgTurn) Take(ctx context.Context) (func(), bool, error) {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return nil, false, err
	}
	var mine bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtext($1))`, lockAutomationTurn).Scan(&mine); err != nil || !mine {
		tx.Rollback(ctx)
		return nil, false, err
	}
	return func() { tx.Rollback(context.WithoutCancel(ctx)) }, true, nil
}

// logLagCollector is kassa_log_lag_seconds on PostgreSQL (docs/ops.md).
// It positions what can be positioned first (pg.Position, as a puller
// does before it reads): what is left is held back by a transaction still
// running, not by a hub that had nothing to commit since. On SQLite it is
// 0: the one writer's commit is pullable at once.
func (h *Hub) logLagCollector() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kassa_log_lag_seconds",
		Help: "How long the oldest committed change record not yet pullable by the edges has waited (PostgreSQL: held back by a long transaction; 0: none)."}, func() float64 {
		if h.pool == nil {
			return 0
		}
		ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
		defer cancel()
		if _, err := pg.Position(ctx, h.pool); err != nil {
			return -1
		}
		lag, err := pg.LogLag(ctx, h.pool)
		if err != nil {
			return -1
		}
		return lag.Seconds()
	})
}

// PostgresDriver is the database/sql driver name of a hub's PostgreSQL
// store (its statements take SQLite's ? placeholders), for tests that
// read the store beside the API without importing it.
const PostgresDriver = pg.DriverName
