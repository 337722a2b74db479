package kassa

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// SyncStatus is a node's view of replication. On an edge it describes its
// link to the hub; on the hub, Edges lists every enrolled edge of the org.
type SyncStatus struct {
	Node         string       `json:"node" openapi:"enum=NodeKind"` // edge or hub
	NodeID       string       `json:"node_id"`
	Connected    bool         `json:"connected"`
	Since        time.Time    `json:"since"`
	PendingUp    int          `json:"pending_up"`   // changes waiting to go to the hub
	PendingDown  int64        `json:"pending_down"` // changes waiting to come from the hub
	LastVerified *time.Time   `json:"last_verified"`
	LastError    string       `json:"last_error,omitempty"`
	Edges        []EdgeStatus `json:"edges,omitempty"`
	// VerifyOK is the result of the edge's last digest comparison with
	// the hub (null before the first, and on the hub); VerifyDiffer the
	// tables that differed then.
	VerifyOK     *bool    `json:"verify_ok,omitempty"`
	VerifyDiffer []string `json:"verify_differ,omitempty"`
	// InSync (edge only) is true only while the link is up, nothing waits
	// either way, the last verification agreed and the hub refuses none of
	// the store's changes: the only state the console calls "in sync".
	InSync *bool `json:"in_sync,omitempty"`
	// RefusedCount (edge only) is how many of the store's changes the hub
	// refused and holds in quarantine; Refused lists them (the newest 100),
	// each with a sentence saying what and why.
	RefusedCount int           `json:"refused_count,omitempty"`
	Refused      []SyncRefusal `json:"refused,omitempty"`
}

// SyncRefusal is a change of this store that the hub refused and holds in
// quarantine until ops re-apply it or take a version (docs/trust.md).
type SyncRefusal struct {
	ChangeID string `json:"change_id"`
	Entity   string `json:"entity"`
	EntityID string `json:"entity_id"`
	// Reason is the refusal code (refused_field, refused_actor…).
	Reason string `json:"reason"`
	// Error is the hub's own words.
	Error string `json:"error"`
	// Subject names the row as people do: "order 1042", "card payment of
	// 9.60 for order 1042".
	Subject string `json:"subject"`
	// Summary is one sentence: what was refused and why.
	Summary   string    `json:"summary"`
	RefusedAt time.Time `json:"refused_at"`
}

// InSyncOf is SyncStatus.InSync of an edge's figures.
func InSyncOf(st *SyncStatus) bool {
	return st.Connected && st.PendingUp == 0 && st.PendingDown == 0 && st.RefusedCount == 0 &&
		st.VerifyOK != nil && *st.VerifyOK
}

// EdgeStatus is the hub's view of one edge.
type EdgeStatus struct {
	NodeID       string     `json:"node_id"`
	LocationID   string     `json:"location_id"`
	Connected    bool       `json:"connected"` // spoke to the hub in the last 10 s
	LastSeen     *time.Time `json:"last_seen"`
	PendingUp    int        `json:"pending_up"`   // changes waiting at the edge, as it last reported
	PendingDown  int64      `json:"pending_down"` // hub log entries the edge has not pulled
	LastVerified *time.Time `json:"last_verified"`
	EnrolledAt   time.Time  `json:"enrolled_at"`
	// Version is the release the edge last reported (kassa.Version of its
	// build); empty for an edge older than v0.6.0, which does not report one.
	Version string `json:"version"`
	// ConnectedSince is when the edge's current state began: when it last
	// connected if it is connected, when it was last seen if not.
	ConnectedSince *time.Time `json:"connected_since"`
	// ReportedAt is when the edge made the figures below (its own clock,
	// as of its last report): PendingUp, VerifyOK, LagP50, LagP99.
	ReportedAt *time.Time `json:"reported_at"`
	// LagP50 and LagP99 are seconds from a change made at the edge to its
	// commit at the hub, over the edge's recent pushes.
	LagP50 float64 `json:"lag_p50"`
	// LagP99: see LagP50.
	LagP99 float64 `json:"lag_p99"`
	// VerifyOK is the result of the edge's last verification (digests of
	// its scope equal at both nodes); null when it never verified.
	VerifyOK *bool `json:"verify_ok"`
	// VerifyDiffer lists the tables whose digests differed at the last
	// verification; empty when they agreed.
	VerifyDiffer []string `json:"verify_differ"`
	// OpenConflicts counts the unresolved conflicts of the edge's location,
	// quarantined records included.
	OpenConflicts int `json:"open_conflicts"`
	// Quarantined counts the unresolved quarantined records of the edge.
	Quarantined int `json:"quarantined"`
	// Hub names the hub the edge's leaf link was last attached to (its
	// NATS server name, "hub-<node id>"), as this hub heard; empty when
	// it has not heard since it started (docs/cluster.md).
	Hub string `json:"hub"`
}

// Conflict is a merge conflict recorded by sync, with both sides' values.
type Conflict struct {
	ID         string  `json:"id"`
	OrgID      string  `json:"org_id"`
	LocationID *string `json:"location_id"`
	// Kind is what sync found: oversold, overdrawn, overpaid, overrefunded,
	// cancel_lost, clock_clamped, duplicate_key, voucher_overused,
	// gift_card_overdrawn (a gift card redeemed below zero by stores that
	// were offline), or quarantined (a pushed record the hub refused).
	Kind string `json:"kind" openapi:"enum=ConflictKind"`
	// Entity is the kind of row the conflict is about (order, stock_level,
	// customer…).
	Entity string `json:"entity"`
	// EntityID is the id of that row.
	EntityID string `json:"entity_id"`
	// Local is this node's side; for a quarantined record, the error and
	// the reason code it was refused for.
	Local json.RawMessage `json:"local"`
	// Remote is the other side; for a quarantined record, the change
	// record as the edge pushed it.
	Remote json.RawMessage `json:"remote"`
	// DetectedAt is when sync recorded the conflict.
	DetectedAt time.Time `json:"detected_at"`
	// Status is open until someone resolves the conflict (or re-applies a
	// quarantined record), then resolved.
	Status string `json:"status" openapi:"enum=ConflictStatus"`
	// ResolvedAt is when the conflict was resolved; null while open.
	ResolvedAt *time.Time `json:"resolved_at"`
	// ResolvedBy is the user or OAuth client that resolved it; null while open.
	ResolvedBy *string `json:"resolved_by"`
	// Resolution says how: the note given, or "reapplied" for a quarantined
	// record applied again.
	Resolution *string `json:"resolution"`
	// Taken is whose version a resolution took: "edge" (the store's
	// record applied as it was) or "hub" (the hub's row sent to the
	// store); null otherwise.
	Taken *string `json:"taken" openapi:"enum=ConflictTake"`
	// Subject names the row as people do ("order 1042", "card payment of
	// 9.60 for order 1042", "customer Ann Lee"), not by its id.
	Subject string `json:"subject"`
	// Summary is one sentence saying what the conflict is; for a
	// quarantined record, what the store did and why the hub refused it.
	Summary string `json:"summary"`
}

// ConflictFilter selects conflicts: Status open or resolved, "" all.
type ConflictFilter struct {
	Status string
	Page
}

// SyncService reports replication state.
type SyncService interface {
	Status(ctx context.Context) (*SyncStatus, error)
	Conflicts(ctx context.Context, f ConflictFilter) (List[Conflict], error)
}

// ResolutionReapplied is the resolution of a quarantined record that was
// applied again.
const ResolutionReapplied = "reapplied"

// MaxResolutionNote bounds the note a conflict is resolved with.
const MaxResolutionNote = 500

// ConflictResolve is the body of POST /sync/conflicts/:id/resolve.
type ConflictResolve struct {
	// Note says what was done about the conflict (1-500 characters); it
	// becomes the conflict's resolution.
	Note string `json:"note" openapi:"required"`
	// Take, for a quarantined record, resolves it by taking a version:
	// "edge" applies the store's records of that row (and of its order)
	// as they were, without the admission rules; "hub" keeps the hub's
	// row and sends it to the store, which overwrites its own. Omitted:
	// only the note.
	Take string `json:"take,omitempty" openapi:"enum=ConflictTake"`
}

// Versions a resolution can take (ConflictResolve.Take).
const (
	TakeEdge = "edge"
	TakeHub  = "hub"
)

// Validate checks the note and the version taken.
func (in *ConflictResolve) Validate() error {
	var v Validation
	v.Check(strings.TrimSpace(in.Note) != "" && ValidText(in.Note, MaxResolutionNote), "note", "is required: 1-500 characters of text")
	v.Check(in.Take == "" || in.Take == TakeEdge || in.Take == TakeHub, "take", "must be edge or hub")
	return v.Err()
}

// CanResolve reports whether c may be resolved: only an open conflict can.
// Errors: EConflict.
func CanResolve(c *Conflict) error {
	if c.Status != ConflictOpen {
		return Errorf(EConflict, "conflict %s is already resolved", c.ID)
	}
	return nil
}

// CanReapply reports whether c may be re-applied: only an open
// quarantined record can. Errors: EConflict.
func CanReapply(c *Conflict) error {
	if err := CanResolve(c); err != nil {
		return err
	}
	if c.Kind != ConflictQuarantined {
		return Errorf(EConflict, "conflict %s is %s; only a quarantined record can be re-applied", c.ID, c.Kind)
	}
	return nil
}

// ConflictService (hub) resolves sync conflicts: Resolve marks an open
// one resolved with a note; Reapply applies a quarantined record again
// through the same admission as a push from its edge, resolving it when
// it passes. Neither tells the edges anything, except that a re-applied
// record replicates like any accepted change. Errors: ENotFound (also
// another org's), EInvalid (a bad note; a record that still fails, with
// the reason), EConflict (already resolved, or not quarantined).
type ConflictService interface {
	Resolve(ctx context.Context, id string, in *ConflictResolve) (*Conflict, error)
	Reapply(ctx context.Context, id string) (*Conflict, error)
}

// Enrolment is a single-use token that lets an edge join a location.
type Enrolment struct {
	Token      string    `json:"token"` // shown once
	LocationID string    `json:"location_id"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// EnrolmentClaim is the body of POST /sync/enrol. The hub mints the new
// edge's node id; a claim cannot name one.
type EnrolmentClaim struct {
	Token string `json:"token" openapi:"required"`
}

// EnrolResult is what an enrolled edge needs to join: its scope and the
// credentials of its leaf link.
type EnrolResult struct {
	OrgID      string `json:"org_id"`
	LocationID string `json:"location_id"`
	NodeID     string `json:"node_id"`
	LeafURL    string `json:"leaf_url"`
	// LeafURLs are the leaf URLs of every hub of the cluster (LeafURL
	// first); the edge fails over among them (docs/cluster.md).
	LeafURLs     []string `json:"leaf_urls"`
	LeafUser     string   `json:"leaf_user"`
	LeafPassword string   `json:"leaf_password"`
}

// EnrolmentService (hub) issues tokens and enrols edges. CreateEnrolment
// needs an owner. Claim errors: EUnauthorized for an unknown, used or
// expired token.
type EnrolmentService interface {
	CreateEnrolment(ctx context.Context, locationID string) (*Enrolment, error)
	Claim(ctx context.Context, in *EnrolmentClaim) (*EnrolResult, error)
	// RevokeNode revokes an enrolled edge of the caller's org (owners):
	// its link is cut and its credentials never work again; a token can
	// enrol a new node, never this one. Errors: EForbidden, ENotFound.
	RevokeNode(ctx context.Context, nodeID string) error
}
