package engine

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"kassa.dev/shared/kassa"
)

// IdempotencyStore implements kassa.IdempotencyStore in the
// idempotency_keys table. Keys older than kassa.IdempotencyWindow are
// treated as unused and overwritten.
//
// A request takes one writer unit for its key, not three: Begin claims the
// key in memory and reads the table from a reader; the first unit of work
// the request commits writes the key's record ("running") in that same
// unit (runUnit), so the record and the effect commit together; Complete
// turns it into the kept answer. A key's record therefore exists only once
// its request's effect did: a crash before the commit leaves nothing (a
// retry runs again), a crash between the commit and Complete leaves a
// running record with no claim, which answers 409 and never runs the
// effect twice (docs/write-path.md).
type IdempotencyStore struct {
	db      *DB
	mu      sync.Mutex
	claimed map[string]*idemClaim // scope "\x00" key; requests still running here, or their answers being kept
	answers []*answer             // completed, waiting for a keeping unit
	keeping sync.WaitGroup        // keeping units under way (Flush)
}

// idemClaim is a key claimed by a running request, carried in its context
// to the units it writes.
type idemClaim struct {
	store          *IdempotencyStore
	scope, key, fp string
	claimedAt      string
	recorded       atomic.Bool // a committed unit wrote the record
	// answer is the request's answer once it completed, until the unit
	// keeping it committed: a retry meanwhile is answered from it
	// (guarded by store.mu).
	answer *kassa.IdempotentResponse
}

type idemClaimKey struct{}

// NewIdempotencyStore returns the idempotency store of db.
func NewIdempotencyStore(db *DB) *IdempotencyStore {
	return &IdempotencyStore{db: db, claimed: map[string]*idemClaim{}}
}

var _ kassa.IdempotencyStore = (*IdempotencyStore)(nil)

// Begin claims key or returns the response stored for it. The claim is
// held in memory first and the table read after, so a request that
// finished a moment ago is seen committed (its claim is released only
// after its commit).
func (s *IdempotencyStore) Begin(ctx context.Context, scope, key, fingerprint string) (context.Context, *kassa.IdempotentResponse, error) {
	now := s.db.Now()
	// Kept past the request (Complete does not wait): a caller's strings
	// may point into a buffer it reuses (Fiber's).
	scope, key = strings.Clone(scope), strings.Clone(key)
	c := &idemClaim{store: s, scope: scope, key: key, fp: fingerprint, claimedAt: FmtTime(now)}
	s.mu.Lock()
	if held := s.claimed[scope+"\x00"+key]; held != nil {
		answer := held.answer
		s.mu.Unlock()
		again, err := kassa.IdempotencyReplay(&kassa.IdempotencyRecord{Fingerprint: held.fp, Running: answer == nil, ClaimedAt: now}, fingerprint, now)
		if again {
			r := *answer
			return ctx, &r, nil
		}
		return ctx, nil, err
	}
	s.claimed[scope+"\x00"+key] = c
	s.mu.Unlock()
	var fp, status, created string
	var r kassa.IdempotentResponse
	var rs sql.NullInt64
	var ct, loc sql.NullString
	err := s.db.Reader.QueryRowContext(ctx, `SELECT fingerprint, status, resp_status, content_type, location, body, created_at
		FROM idempotency_keys WHERE scope = ? AND key = ?`, scope, key).Scan(&fp, &status, &rs, &ct, &loc, &r.Body, &created)
	var held *kassa.IdempotencyRecord
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		s.release(c)
		return ctx, nil, err
	default:
		held = &kassa.IdempotencyRecord{Fingerprint: fp, Running: status == "running", ClaimedAt: ParseTime(created)}
	}
	again, err := kassa.IdempotencyReplay(held, fingerprint, now)
	if err != nil || again {
		s.release(c)
		r.Status, r.ContentType, r.Location = int(rs.Int64), ct.String, loc.String
		if err != nil {
			return ctx, nil, err
		}
		return ctx, &r, nil
	}
	return context.WithValue(ctx, idemClaimKey{}, c), nil, nil
}

func (s *IdempotencyStore) release(c *idemClaim) {
	s.mu.Lock()
	if s.claimed[c.scope+"\x00"+c.key] == c {
		delete(s.claimed, c.scope+"\x00"+c.key)
	}
	s.mu.Unlock()
}

// held returns the claim of a running request on key, or nil.
func (s *IdempotencyStore) held(scope, key string) *idemClaim {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claimed[scope+"\x00"+key]
}

const claimRecord = `INSERT INTO idempotency_keys (scope, key, fingerprint, status, created_at) VALUES (?, ?, ?, 'running', ?)
	ON CONFLICT(scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = 'running', resp_status = NULL,
	content_type = NULL, location = NULL, body = NULL, created_at = excluded.created_at`

// recordClaim writes the key's record in the first unit of its request
// that writes to this store (called by runUnit, inside the unit). It
// returns the claim to mark recorded once the unit commits.
func (tx *Tx) recordClaim(ctx context.Context) (*idemClaim, error) {
	c, _ := ctx.Value(idemClaimKey{}).(*idemClaim)
	if c == nil || c.store.db != tx.DB || c.recorded.Load() {
		return nil, nil
	}
	_, err := tx.ExecCached(ctx, claimRecord, c.scope, c.key, c.fp, c.claimedAt)
	return c, err
}

// Complete stores the response of a claimed key and releases the claim
// once it is kept. Answers are group-kept: those of requests completing
// together are written in one writer unit (keeping.keep), so a keyed
// request costs its own unit plus a share of one. Complete does not wait
// for that unit: the request's effect committed in its own unit, and
// until its answer is kept a retry is answered from memory (Begin); a
// crash before it leaves the running record, as a crash just before
// Complete always did (docs/write-path.md). Flush waits for the units.
func (s *IdempotencyStore) Complete(ctx context.Context, scope, key string, r *kassa.IdempotentResponse) error {
	a := &answer{scope: strings.Clone(scope), key: strings.Clone(key), fp: "", claimedAt: FmtTime(s.db.Now()), r: r}
	s.mu.Lock()
	if c := s.claimed[scope+"\x00"+key]; c != nil {
		a.fp, a.claimedAt, a.claim = c.fp, c.claimedAt, c
		c.answer = r
	}
	s.answers = append(s.answers, a)
	lead := len(s.answers) == 1
	if lead {
		s.keeping.Add(1)
	}
	s.mu.Unlock()
	if lead {
		go s.keepQueued(context.WithoutCancel(ctx))
	}
	return nil
}

// keepQueued runs one unit keeping the answers queued when it runs, then
// releases their claims.
func (s *IdempotencyStore) keepQueued(ctx context.Context) {
	defer s.keeping.Done()
	f := &keeping{store: s}
	err := s.db.Write(unclaimed(ctx), f.keep)
	if f.taken == nil { // the unit never ran: drop what it would have kept
		f.take()
	}
	if err != nil {
		s.db.Log.Warn("sqlite: keeping idempotent answers; their keys answer 409 until they expire", "answers", len(f.taken), "err", err)
	}
	for _, a := range f.taken {
		if a.claim != nil {
			s.release(a.claim)
		}
	}
}

// Flush waits until the answers completed so far are kept (or failed):
// the node calls it before it closes the store.
func (s *IdempotencyStore) Flush() { s.keeping.Wait() }

// answer is a completed request's response waiting to be kept.
type answer struct {
	scope, key, fp, claimedAt string
	r                         *kassa.IdempotentResponse
	claim                     *idemClaim // released once kept; nil for a key not claimed here
}

// keeping is one unit keeping the answers queued when it runs.
type keeping struct {
	store *IdempotencyStore
	taken []*answer
}

func (f *keeping) take() {
	f.store.mu.Lock()
	f.taken, f.store.answers = f.store.answers, nil
	f.store.mu.Unlock()
}

// keep is the unit: it writes every answer queued when it runs.
func (f *keeping) keep(tx *Tx) error {
	f.take()
	for _, a := range f.taken {
		if _, err := tx.ExecCached(context.Background(), keepAnswer, a.scope, a.key, a.fp,
			a.r.Status, a.r.ContentType, a.r.Location, a.r.Body, a.claimedAt); err != nil {
			return err
		}
	}
	return nil
}

const keepAnswer = `INSERT INTO idempotency_keys (scope, key, fingerprint, status, resp_status, content_type, location, body, created_at)
	VALUES (?, ?, ?, 'done', ?, ?, ?, ?, ?)
	ON CONFLICT(scope, key) DO UPDATE SET status = 'done', resp_status = excluded.resp_status,
	content_type = excluded.content_type, location = excluded.location, body = excluded.body`

// unclaimed hides the claim from the unit that completes or abandons it:
// that unit writes the record itself.
func unclaimed(ctx context.Context) context.Context {
	return context.WithValue(ctx, idemClaimKey{}, (*idemClaim)(nil))
}

// Abandon releases a claimed key without a response (the request failed
// with a server error), so a retry runs again. A key whose request wrote
// nothing has no record: releasing it takes no writer unit.
func (s *IdempotencyStore) Abandon(ctx context.Context, scope, key string) error {
	if c := s.held(scope, key); c != nil {
		defer s.release(c)
		if !c.recorded.Load() {
			return nil
		}
	}
	return s.db.Exec(unclaimed(ctx), `DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND status = 'running'`, scope, key)
}
