// Package link moves change records between an edge and its hub over NATS
// request/reply, across the leaf-node link.
//
// Each node's outbox is the durable queue: an edge pushes its unsent
// records in order and marks them sent only after the hub replied that it
// committed them; it pulls the hub's log of its scope from a saved cursor
// and saves the cursor only after applying. Nothing depends on the link
// being up: offline, records wait in the outbox and the cursor stays
// where it was. Apply is idempotent by change id, so a retry after a lost
// reply, a duplicate delivery or a replay is harmless.
//
// Subjects, for an edge of org O, location L and node N:
//
//	kassa.up.O.L.N      edge → hub: push records (request)
//	kassa.pull.O.L.N    edge → hub: pull the log after a cursor (request)
//	kassa.digest.O.L.N  edge → hub: compare table digests (request)
//	kassa.gift.O.L.N    edge → hub: hold or release a gift card payment (request)
//	kassa.notify.O      hub → edges: the org's log grew (org-wide records)
//	kassa.notify.O.L    hub → edge: the log grew for location L
//	kassa.cmd.O.L.N     hub → edge: run an operation at the edge (request)
//	kassa.ans.O.L.N.>   edge → hub: answers to commands
//	_INBOX_N.>          replies to the edge's requests
//
// The hub grants each edge exactly these (EdgePermissions), so an edge can
// neither read nor write another org's or location's traffic.
package link

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"kassa.dev/sync/change"
)

// Identity names an enrolled edge.
type Identity struct {
	Org      string `json:"org_id"`
	Location string `json:"location_id"`
	Node     string `json:"node_id"`
}

func (id Identity) suffix() string { return id.Org + "." + id.Location + "." + id.Node }

// Subjects of an edge.
func (id Identity) UpSubject() string     { return "kassa.up." + id.suffix() }
func (id Identity) PullSubject() string   { return "kassa.pull." + id.suffix() }
func (id Identity) DigestSubject() string { return "kassa.digest." + id.suffix() }
func (id Identity) InboxPrefix() string   { return "_INBOX_" + id.Node }

// NotifyOrg and NotifyLocation are the hub's wake-up subjects.
func NotifyOrg(org string) string           { return "kassa.notify." + org }
func NotifyLocation(org, loc string) string { return "kassa.notify." + org + "." + loc }

// EdgePermissions are the NATS permissions of an edge's leaf connection:
// Publish is what it may send up, Subscribe what may come down to it.
func EdgePermissions(id Identity) *server.Permissions {
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{id.UpSubject(), id.PullSubject(), id.DigestSubject(), id.GiftCardSubject(),
			id.AnswerPrefix() + ".>"}},
		Subscribe: &server.SubjectPermission{Allow: []string{NotifyOrg(id.Org), NotifyLocation(id.Org, id.Location), id.InboxPrefix() + ".>",
			id.CommandSubject()}},
	}
}

// parseSubject reads the identity from an edge's request subject.
func parseSubject(subject string) (Identity, error) {
	parts := strings.Split(subject, ".")
	if len(parts) != 5 || parts[0] != "kassa" {
		return Identity{}, fmt.Errorf("link: bad subject %q", subject)
	}
	return Identity{Org: parts[2], Location: parts[3], Node: parts[4]}, nil
}

// Entry is a change record at its position in a node's log.
type Entry struct {
	Seq    int64         `json:"seq"`
	Change change.Change `json:"change"`
}

// PushRequest carries an edge's outbox records, oldest first.
type PushRequest struct {
	Changes []change.Change `json:"changes"`
	// Format is the edge's change-record format (change.Format); 0 from
	// v0.5.0 edges, which send none. Pull and digest requests carry it too.
	Format int `json:"format,omitempty"`
	// Last is the edge's outbox position of the push's last record, and
	// After that of the batch it follows when the edge sent it before the
	// hub answered that one (0: none; both since v0.9.0): a hub that
	// chains pushes applies it only once that batch committed there.
	Last  int64 `json:"last,omitempty"`
	After int64 `json:"after,omitempty"`
}

// PushReply says the hub committed the records (or why not). Refused
// (since v0.8.0; an older hub sends none, an older edge ignores it) lists
// the records of the push the hub refused and quarantined: committed as
// far as the edge is concerned (it does not send them again), but not
// applied until ops re-apply or resolve them.
type PushReply struct {
	Applied   int       `json:"applied"`
	Duplicate int       `json:"duplicate"`
	Refused   []Refusal `json:"refused,omitempty"`
	Error     string    `json:"error,omitempty"`
	// Chains says the hub orders the edge's pushes (PushRequest.After):
	// the edge may send its next batch before this reply. Ahead says the
	// hub applied nothing because the batch the push follows had not
	// committed there (it failed, or went to another hub): the edge sends
	// again from its first batch not marked sent.
	Chains bool `json:"chains,omitempty"`
	Ahead  bool `json:"ahead,omitempty"`
}

// Refusal is one of an edge's records the hub refused, and why.
type Refusal struct {
	ChangeID string    `json:"change_id"`
	Entity   string    `json:"entity"`
	EntityID string    `json:"entity_id"`
	Op       string    `json:"op"`
	Status   string    `json:"status,omitempty"` // the status the record set, if any
	Fields   []string  `json:"fields,omitempty"` // the names of its fields
	Reason   string    `json:"reason"`           // the refusal code
	Error    string    `json:"error"`
	At       time.Time `json:"at"`
}

// MaxRefusals is how many refusals a pull's reply lists at most (the
// newest); RefusedCount counts them all.
const MaxRefusals = 100

// PullRequest asks for the log after a cursor.
type PullRequest struct {
	After  int64 `json:"after"`
	Limit  int   `json:"limit"`
	Format int   `json:"format,omitempty"` // the hub serves entries in this format
	// The edge's own figures, for the hub's status of every edge.
	PendingUp    int       `json:"pending_up"`
	LastVerified time.Time `json:"last_verified"`
	// Since v0.6.0 (an older edge sends none of these: the hub reads zero
	// values): the edge's release, the result of its last verification
	// (nil before the first; the tables that differed), and when it made
	// these figures, by its own clock.
	Version      string    `json:"version,omitempty"`
	VerifyOK     *bool     `json:"verify_ok,omitempty"`
	VerifyDiffer []string  `json:"verify_differ,omitempty"`
	ReportedAt   time.Time `json:"reported_at,omitzero"`
	// Own asks for the edge's own records too: its store was restored
	// from a backup and lacks those it made after the backup.
	Own bool `json:"own,omitempty"`
}

// PullReply carries log entries, the position the edge may move its
// cursor to (past entries it need not receive, such as its own), and the
// hub's newest position.
type PullReply struct {
	Entries []Entry `json:"entries"`
	UpTo    int64   `json:"up_to"`
	Last    int64   `json:"last"`
	// Epoch names the hub's log; it changes when the hub's store is
	// restored from a backup, whose log positions edges may have passed.
	Epoch string `json:"epoch,omitempty"`
	// Refused (since v0.8.0; nil from an older hub) is the edge's whole
	// list of records the hub holds refused, newest first, at most
	// MaxRefusals of RefusedCount: those re-applied or resolved since
	// are no longer in it. An empty list means none.
	Refused      *[]Refusal `json:"refused,omitempty"`
	RefusedCount int        `json:"refused_count,omitempty"`
	// LeafURLs (after v0.8.0; an older hub sends none, an older edge
	// ignores them) are the leaf URLs of every hub of the cluster: an
	// edge keeps them and fails over among them (docs/cluster.md).
	LeafURLs []string `json:"leaf_urls,omitempty"`
	// Waiting (after v0.8.0; an older hub never sends it), answered to a
	// pull of an edge restored from a backup (PullRequest.Own): the hub
	// holds committed records of that edge its log does not serve yet (on
	// PostgreSQL, commits waiting for their positions behind an older
	// transaction). Such an edge keeps asking for its own records until
	// none waits: they may be the sales it lost.
	Waiting bool   `json:"waiting,omitempty"`
	Error   string `json:"error,omitempty"`
}

// DigestRequest carries an edge's digest of each replicated table in its scope.
type DigestRequest struct {
	Tables map[string]string `json:"tables"`
	Format int               `json:"format,omitempty"` // digests over this format's tables and columns
}

// DigestReply lists the tables whose digests differ at the hub.
type DigestReply struct {
	Differ []string `json:"differ"`
	Error  string   `json:"error,omitempty"`
}

// EdgeStore is what an edge's link needs of its store.
type EdgeStore interface {
	// Unsent returns up to limit outbox entries after seq not yet
	// acknowledged, oldest first.
	Unsent(ctx context.Context, after int64, limit int) ([]Entry, error)
	// MarkSent records the hub's acknowledgement of entries up to seq.
	MarkSent(ctx context.Context, seq int64) error
	// ApplyRemote applies the hub's records; idempotent.
	ApplyRemote(ctx context.Context, cs []change.Change) error
	// Cursor and SetCursor keep the position in the hub's log.
	Cursor(ctx context.Context) (int64, error)
	SetCursor(ctx context.Context, seq int64) error
	// Resyncing reports whether the store was restored from a backup and
	// has not caught up with the hub's log since (pulls then ask for the
	// edge's own records too); EndResync records that it has.
	Resyncing(ctx context.Context) (bool, error)
	EndResync(ctx context.Context) error
	// HubEpoch is the epoch of the hub's log the edge last saw ("" at
	// first). SetHubEpoch records a new one; with restored (the hub's
	// store was restored from a backup) it also moves the cursor to the
	// start and marks the whole outbox unsent, in one unit.
	HubEpoch(ctx context.Context) (string, error)
	SetHubEpoch(ctx context.Context, epoch string, restored bool) error
	// Digests returns a digest of each replicated table in the edge's scope.
	Digests(ctx context.Context) (map[string]string, error)
	// Committed is signalled after local commits.
	Committed() <-chan struct{}
	// KeepRefusals records what the hub said it refused; with replace, rs
	// (of total) is the whole list and replaces the one kept.
	KeepRefusals(ctx context.Context, rs []Refusal, total int, replace bool) error
}

// HubStore is what the hub's link needs of its store.
type HubStore interface {
	// Ingest applies an edge's records and appends them to the hub's log.
	// It refuses, changing nothing, the records of an edge that is not
	// Known, checked in the unit that applies them (the hub asks no more).
	// Refused lists the records it refused.
	Ingest(ctx context.Context, from Identity, cs []change.Change) (applied, duplicate int, refused []Refusal, err error)
	// Refusals returns the edge's open refused records, newest first (at
	// most MaxRefusals), and how many there are.
	Refusals(ctx context.Context, of Identity) ([]Refusal, int, error)
	// Log returns entries of the hub's log in an edge's scope after a
	// position (leaving out the edge's own records), the position up to
	// which the log was examined, and the newest position. req carries
	// the edge's own figures, and its format (negotiated: never 0), in
	// which the entries are served.
	Log(ctx context.Context, to Identity, req PullRequest) (es []Entry, upTo, last int64, err error)
	// Digests returns the hub's digests of the tables in an edge's scope,
	// as an edge of change-record format computes them.
	Digests(ctx context.Context, of Identity, format int) (map[string]string, error)
	// Epoch names the hub's log (PullReply.Epoch).
	Epoch(ctx context.Context) (string, error)
	// LogWaiting reports whether committed records an edge pushed wait
	// for their log positions (PullReply.Waiting).
	LogWaiting(ctx context.Context, of Identity) (bool, error)
	// Known reports whether an edge is enrolled and not revoked.
	Known(ctx context.Context, id Identity) bool
}

// Preparer is a HubStore that does the work of a push that needs none of
// the edge's earlier pushes (decoding what a record carries, checks of a
// record alone) before the push's turn: while the edge's push before it
// applies. What it finds it keeps in the records (change.Change.Decoded).
type Preparer interface {
	Prepare(cs []change.Change)
}

// ErrRefused is returned for records an edge may not send.
var ErrRefused = errors.New("link: refused")

// CheckScope refuses records outside an edge's identity: another org,
// another location, or made by another node.
func CheckScope(from Identity, cs []change.Change) error {
	for _, c := range cs {
		if c.OrgID != from.Org || c.Origin != from.Node || (c.LocationID != "" && c.LocationID != from.Location) {
			return fmt.Errorf("%w: change %s (org %s, location %s, origin %s) is outside the edge's scope", ErrRefused, c.ID, c.OrgID, c.LocationID, c.Origin)
		}
	}
	return nil
}
