package sqlite

import (
	"sync"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
)

// sessionCache is what Authenticate found of the sessions it checked: per
// session, its user, org and the user's role, so that a request with an
// open session does not query sessions and users again (the order flow's
// three requests per sale paid for that query each; docs/write-path.md).
//
// An entry holds for the generation of its org it was read under, and
// anything that can end a session or change its user moves the org's
// generation on once it committed: a write of the org's users, local or
// synced (the user noun's state watches the units, userState), a logout,
// a refresh token's reuse (AuthService). Authenticate takes the
// generation before it reads, so a read that raced a commit is kept
// under the older generation and never used. Expiry is the token's own
// (token.Signer.Parse), checked on every request.
//
// On PostgreSQL the cache is off: several hubs may share the database,
// and one hub's memory does not hear another's logout.
type sessionCache struct {
	mu   sync.Mutex
	gens map[string]uint64      // org → generation
	seen map[string]sessionSeen // session id → what was read
}

// sessionSeen is one session as Authenticate read it.
type sessionSeen struct {
	userID, orgID string
	role          kassa.Role
	gen           uint64
}

// maxSessionsSeen bounds the cache: past it, it starts again empty.
const maxSessionsSeen = 10_000

// role returns the role read for session sid of user userID in org orgID
// under the org's current generation, if any.
func (c *sessionCache) role(sid, userID, orgID string) (kassa.Role, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.seen[sid]
	if !ok || e.userID != userID || e.orgID != orgID || e.gen != c.gens[orgID] {
		return "", false
	}
	return e.role, true
}

// generation is orgID's generation, taken before a read of its sessions.
func (c *sessionCache) generation(orgID string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[orgID]
}

// keep remembers what a read under generation gen found.
func (c *sessionCache) keep(sid string, e sessionSeen) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil || len(c.seen) >= maxSessionsSeen {
		c.seen = map[string]sessionSeen{}
	}
	c.seen[sid] = e
}

// ended moves the orgs' generations on: every session read before is
// read again. Called after the commit that ended or changed them.
func (c *sessionCache) ended(orgIDs ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens == nil {
		c.gens = map[string]uint64{}
	}
	for _, org := range orgIDs {
		c.gens[org]++
	}
}

// userState is what a store keeps in memory of its users: the sessions
// Authenticate checked, forgotten after every committed write of an org's
// users (engine.UnitWatcher).
type userState struct{ sessions sessionCache }

// sessionsIn is db's session cache, nil where it is off (PostgreSQL).
func sessionsIn(db *DB) *sessionCache {
	if engine.D(db.DB).Name() != "sqlite" {
		return nil
	}
	return &db.States[entUser].(*userState).sessions
}

func (s *userState) Writing(string) {}

func (s *userState) Undone([]string) {}

func (s *userState) Settled(orgIDs []string, committed bool) { s.sessions.ended(orgIDs...) }

var _ engine.UnitWatcher = (*userState)(nil)
