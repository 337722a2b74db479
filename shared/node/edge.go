package node

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite"
	"kassa.dev/sync/change"
	"kassa.dev/sync/link"
)

// The edge's side of sync that touches the store: its enrolment at a hub,
// its identity, the link's store and the sync status. The edge binary
// wires these to its NATS connection; it does not reach into the store.

// Keys of the edge's identity in node_meta.
const (
	metaOrg      = "sync_org"
	metaLocation = sqlite.MetaEdgeLocation
	metaLeafURL  = "sync_leaf_url"
	metaLeafURLs = "sync_leaf_urls" // every hub's, one a line (docs/cluster.md); "" from an edge enrolled before
	metaPassword = "sync_leaf_password"
	metaCursor   = sqlite.MetaPullCursor
)

// Enrolment is where and how an edge enrols at its hub (Config.Enrol).
type Enrolment struct {
	HubURL string
	Token  string // single-use enrolment token; "" once enrolled
	TLS    *tls.Config
}

// enrolIfAsked enrols the store at its hub when e carries a token and the
// store is not enrolled yet; Open calls it before anything reads the node
// id, since the edge adopts the id its hub mints.
func enrolIfAsked(ctx context.Context, db *sqlite.DB, e *Enrolment) error {
	if e == nil || e.Token == "" {
		return nil
	}
	org, err := db.Meta(ctx, metaOrg)
	if err != nil || org != "" {
		return err
	}
	if e.HubURL == "" {
		return fmt.Errorf("edge: --enrol-token needs --hub-url")
	}
	return enrol(ctx, db, e.HubURL, e.Token, e.TLS)
}

// enrol claims the token at the hub and keeps what it returns, adopting
// the node id the hub minted. A store with changes of its own (it ran
// standalone) cannot enrol: its history carries its old id.
func enrol(ctx context.Context, db *sqlite.DB, hubURL, token string, clientTLS *tls.Config) error {
	if n, err := db.OutboxLen(ctx, sqlite.LogFilter{}); err != nil || n > 0 {
		if err == nil {
			err = fmt.Errorf("edge: this store has %d changes of its own (it ran standalone); only an empty store can enrol: start with a new --data-dir", n)
		}
		return err
	}
	body, _ := json.Marshal(kassa.EnrolmentClaim{Token: token})
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimSuffix(hubURL, "/")+"/api/v1/sync/enrol", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: clientTLS}}).Do(req)
	if err != nil {
		return fmt.Errorf("edge: enrol at %s: %w", hubURL, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return fmt.Errorf("edge: enrol at %s: %d %s", hubURL, res.StatusCode, b)
	}
	var out struct {
		Data kassa.EnrolResult `json:"data"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return err
	}
	if err := db.AdoptNodeID(ctx, out.Data.NodeID); err != nil {
		return fmt.Errorf("edge: enrol: %w", err)
	}
	// The org goes last: it marks the edge enrolled.
	for _, kv := range [][2]string{{metaLocation, out.Data.LocationID}, {metaLeafURL, out.Data.LeafURL},
		{metaLeafURLs, strings.Join(out.Data.LeafURLs, "\n")},
		{metaPassword, out.Data.LeafPassword}, {metaCursor, "0"}, {metaOrg, out.Data.OrgID}} {
		if err := db.SetMeta(ctx, kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// NodeID is the store's node id.
func (n *Node) NodeID() string { return n.db.NodeID }

// EdgeIdentity returns the edge's enrolled identity and leaf URLs (with
// its credentials: every hub's of the cluster, as last heard;
// leafOverride replaces them), or nil for an edge that is not enrolled.
func (n *Node) EdgeIdentity(ctx context.Context, leafOverride string) (*link.Identity, []string, error) {
	db := n.db
	org, err := db.Meta(ctx, metaOrg)
	if err != nil || org == "" {
		return nil, nil, err
	}
	vals := map[string]string{}
	for _, k := range []string{metaOrg, metaLocation, metaLeafURL, metaLeafURLs, metaPassword} {
		if vals[k], err = db.Meta(ctx, k); err != nil {
			return nil, nil, err
		}
	}
	leafs := strings.Fields(vals[metaLeafURLs])
	if len(leafs) == 0 {
		leafs = []string{vals[metaLeafURL]}
	}
	if leafOverride != "" {
		leafs = strings.Split(leafOverride, ",")
	}
	creds, err := withCredentials(leafs, db.NodeID, vals[metaPassword])
	return &link.Identity{Org: vals[metaOrg], Location: vals[metaLocation], Node: db.NodeID}, creds, err
}

// withCredentials adds the edge's leaf credentials to each URL.
func withCredentials(leafs []string, user, password string) ([]string, error) {
	out := make([]string, len(leafs))
	for i, leaf := range leafs {
		u, err := url.Parse(strings.TrimSpace(leaf))
		if err != nil {
			return nil, fmt.Errorf("edge: leaf url %q: %w", leaf, err)
		}
		u.User = url.UserPassword(user, password)
		out[i] = u.String()
	}
	return out, nil
}

// NewLeafURLs keeps the cluster's leaf URLs a hub gave (with a pull) and
// returns them with the edge's credentials when they differ from those
// kept as a set; nil when they are the same. Order is not a change: each
// hub lists its own URL first and any hub of the cluster may answer a
// pull, so comparing lists made an edge replace its leaf remote (and
// drop its live link) whenever the answering hub changed (docs/cluster.md,
// 2026-11-29).
func (n *Node) NewLeafURLs(ctx context.Context, urls []string) ([]string, error) {
	kept, err := n.db.Meta(ctx, metaLeafURLs)
	if err == nil && kept == "" { // enrolled before the hubs gave a list
		kept, err = n.db.Meta(ctx, metaLeafURL)
	}
	urls = slices.Sorted(slices.Values(urls))
	if err != nil || slices.Equal(slices.Sorted(slices.Values(strings.Fields(kept))), urls) {
		return nil, err
	}
	password, err := n.db.Meta(ctx, metaPassword)
	if err != nil {
		return nil, err
	}
	creds, err := withCredentials(urls, n.db.NodeID, password)
	if err != nil {
		return nil, err
	}
	return creds, n.db.SetMeta(ctx, metaLeafURLs, strings.Join(urls, "\n"))
}

// SetUnderHub marks an enrolled edge: hub-only data is not written here.
func (n *Node) SetUnderHub() { n.db.SetUnderHub() }

// PendingUp counts local changes the hub has not acknowledged yet.
func (n *Node) PendingUp(ctx context.Context) (int, error) {
	return n.db.OutboxLen(ctx, sqlite.LogFilter{Unsent: true})
}

// EdgeLinkStore is the store as the edge's sync link sees it; lag, if not
// nil, observes the time from a change made elsewhere to its apply here.
func (n *Node) EdgeLinkStore(id link.Identity, lag prometheus.Observer) link.EdgeStore {
	return &edgeStore{db: n.db, id: id, lag: lag}
}

// edgeStore adapts the edge's store to the link.
type edgeStore struct {
	db  *sqlite.DB
	id  link.Identity
	lag prometheus.Observer
}

func (s *edgeStore) Unsent(ctx context.Context, after int64, limit int) ([]link.Entry, error) {
	log, err := s.db.ChangesAfter(ctx, after, limit, sqlite.LogFilter{Unsent: true, Raw: true}) // pushed as stored
	out := make([]link.Entry, len(log))
	for i, e := range log {
		out[i] = link.Entry{Seq: e.Seq, Change: e.Change}
	}
	return out, err
}

func (s *edgeStore) MarkSent(ctx context.Context, seq int64) error { return s.db.MarkSent(ctx, seq) }

func (s *edgeStore) ApplyRemote(ctx context.Context, cs []change.Change) error {
	own, err := s.db.Resync(ctx)
	if err != nil {
		return err
	}
	if own != nil {
		_, _, err = s.db.ApplyResync(ctx, cs, own)
	} else {
		_, _, err = s.db.ApplyEach(ctx, cs, false)
	}
	if err == nil && s.lag != nil {
		now := time.Now()
		for _, c := range cs {
			s.lag.Observe(now.Sub(c.HLC.Time()).Seconds())
		}
	}
	return err
}

func (s *edgeStore) Cursor(ctx context.Context) (int64, error) {
	v, err := s.db.Meta(ctx, metaCursor)
	if err != nil || v == "" {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

func (s *edgeStore) SetCursor(ctx context.Context, seq int64) error {
	return s.db.SetMeta(ctx, metaCursor, strconv.FormatInt(seq, 10))
}

func (s *edgeStore) Resyncing(ctx context.Context) (bool, error) {
	own, err := s.db.Resync(ctx)
	return own != nil, err
}

func (s *edgeStore) EndResync(ctx context.Context) error { return s.db.EndResync(ctx) }

func (s *edgeStore) HubEpoch(ctx context.Context) (string, error) { return s.db.HubEpoch(ctx) }

func (s *edgeStore) SetHubEpoch(ctx context.Context, epoch string, restored bool) error {
	return s.db.SetHubEpoch(ctx, epoch, restored)
}

func (s *edgeStore) Digests(ctx context.Context) (map[string]string, error) {
	return s.db.Digests(ctx, s.id.Org, s.id.Location)
}

func (s *edgeStore) Committed() <-chan struct{} { return s.db.Committed() }

func (s *edgeStore) KeepRefusals(ctx context.Context, rs []link.Refusal, total int, replace bool) error {
	in := make([]sqlite.Refused, len(rs))
	for i, r := range rs {
		in[i] = sqlite.Refused{ChangeID: r.ChangeID, Entity: r.Entity, EntityID: r.EntityID, Op: r.Op, Status: r.Status,
			Fields: r.Fields, Reason: r.Reason, Error: r.Error, At: r.At}
	}
	return s.db.KeepRefusals(ctx, in, total, replace)
}

// EdgeSync returns the edge's kassa.SyncService; link returns the sync
// link once the edge is enrolled and its link built, else nil.
func (n *Node) EdgeSync(link func() *link.Edge) kassa.SyncService {
	return &edgeSync{db: n.db, link: link}
}

// edgeSync is the edge's kassa.SyncService.
type edgeSync struct {
	db   *sqlite.DB
	link func() *link.Edge
}

func (s *edgeSync) Status(ctx context.Context) (*kassa.SyncStatus, error) {
	if _, err := kassa.MustActor(ctx); err != nil {
		return nil, err
	}
	st := &kassa.SyncStatus{Node: kassa.NodeEdge, NodeID: s.db.NodeID}
	pending, err := s.db.OutboxLen(ctx, sqlite.LogFilter{Unsent: true})
	if err != nil {
		return nil, err
	}
	st.PendingUp = pending
	if e := s.link(); e != nil {
		ls := e.Status()
		st.Connected, st.Since, st.PendingDown, st.LastError = ls.Connected, ls.Since, ls.PendingDown, ls.LastError
		st.VerifyOK, st.VerifyDiffer = ls.VerifyOK, ls.VerifyDiffer
		if !ls.LastVerified.IsZero() {
			st.LastVerified = &ls.LastVerified
		}
	} else {
		st.LastError = "not enrolled at a hub"
	}
	if st.Refused, st.RefusedCount, err = s.db.Refusals(ctx, link.MaxRefusals); err != nil {
		return nil, err
	}
	inSync := kassa.InSyncOf(st)
	st.InSync = &inSync
	return st, nil
}

func (s *edgeSync) Conflicts(ctx context.Context, f kassa.ConflictFilter) (kassa.List[kassa.Conflict], error) {
	return s.db.Conflicts(ctx, f)
}
