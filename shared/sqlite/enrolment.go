package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"kassa.dev/shared/kassa"
)

// EnrolmentTTL is how long an enrolment token can be claimed.
const EnrolmentTTL = 24 * time.Hour

// EnrolmentService implements kassa.EnrolmentService on the hub.
type EnrolmentService struct {
	db       *DB
	leafURLs func() []string // the cluster's leaf-node URLs as edges reach them, this hub's first
	onRevoke func(nodeID string)
}

// NewEnrolmentService returns the enrolment service of a hub whose leaf
// listener edges reach at leafURL.
func NewEnrolmentService(db *DB, leafURL func() string) *EnrolmentService {
	return &EnrolmentService{db: db, leafURLs: func() []string { return []string{leafURL()} }}
}

// SetLeafURLs gives the leaf URLs of every hub of the cluster, this hub's
// first, handed to enrolling edges (docs/cluster.md).
func (s *EnrolmentService) SetLeafURLs(urls func() []string) { s.leafURLs = urls }

var _ kassa.EnrolmentService = (*EnrolmentService)(nil)

// CreateEnrolment issues a single-use token for a location; owners only.
func (s *EnrolmentService) CreateEnrolment(ctx context.Context, locationID string) (*kassa.Enrolment, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if a.Role != kassa.RoleOwner {
		return nil, kassa.Errorf(kassa.EForbidden, "only an owner can enrol an edge")
	}
	if _, err := findLocation(ctx, s.db.Reader, a.OrgID, locationID); err != nil {
		return nil, err
	}
	token := "kse_" + randomHex(24)
	expires := s.db.Now().Add(EnrolmentTTL).UTC().Truncate(time.Millisecond)
	err = s.db.Exec(ctx, `INSERT INTO enrolment_tokens (token_hash, org_id, location_id, created_by, expires_at) VALUES (?, ?, ?, ?, ?)`,
		hashSecret(token), a.OrgID, locationID, nullString(a.UserID), fmtTime(expires))
	if err != nil {
		return nil, err
	}
	return &kassa.Enrolment{Token: token, LocationID: locationID, ExpiresAt: expires}, nil
}

var errBadEnrolment = kassa.Errorf(kassa.EUnauthorized, "the enrolment token is unknown, used or expired")

// Claim enrols a new edge with a token: the token is spent, the edge's
// node id and link secret are minted (only the secret's hash is kept) and
// returned once. A claim only ever adds a sync node of the token's org and
// location; it never touches an existing one (a revoked node stays
// revoked). Errors: EUnauthorized for an unknown, used or expired token.
func (s *EnrolmentService) Claim(ctx context.Context, in *kassa.EnrolmentClaim) (*kassa.EnrolResult, error) {
	secret := randomHex(32)
	nodeID := s.db.NewID()
	var res kassa.EnrolResult
	err := s.db.Write(ctx, func(tx *Tx) error {
		var org, loc, expires string
		var used sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT org_id, location_id, expires_at, used_at FROM enrolment_tokens WHERE token_hash = ?`,
			hashSecret(in.Token)).Scan(&org, &loc, &expires, &used)
		if errors.Is(err, sql.ErrNoRows) || err == nil && (used.Valid || parseTime(expires).Before(tx.Now)) {
			return errBadEnrolment
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE enrolment_tokens SET used_at = ?, used_by = ? WHERE token_hash = ?`,
			fmtTime(tx.Now), nodeID, hashSecret(in.Token)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO sync_nodes (node_id, org_id, location_id, secret_hash, enrolled_at) VALUES (?, ?, ?, ?, ?)`,
			nodeID, org, loc, hashSecret(secret), fmtTime(tx.Now))
		urls := s.leafURLs()
		res = kassa.EnrolResult{OrgID: org, LocationID: loc, NodeID: nodeID, LeafURL: urls[0], LeafURLs: urls, LeafUser: nodeID, LeafPassword: secret}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// RevokeNode revokes an enrolled edge of the caller's org; owners only.
// Revoking a revoked node is a no-op. The hook set with OnRevoke (the hub
// cuts the node's live link) runs after the commit.
func (s *EnrolmentService) RevokeNode(ctx context.Context, nodeID string) error {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return err
	}
	if a.Role != kassa.RoleOwner {
		return kassa.Errorf(kassa.EForbidden, "only an owner can revoke an edge")
	}
	err = s.db.Write(ctx, func(tx *Tx) error {
		var revoked sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT revoked_at FROM sync_nodes WHERE node_id = ? AND org_id = ?`, nodeID, a.OrgID).Scan(&revoked)
		if errors.Is(err, sql.ErrNoRows) {
			return kassa.Errorf(kassa.ENotFound, "no enrolled edge %s", nodeID)
		}
		if err != nil || revoked.Valid {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE sync_nodes SET revoked_at = ? WHERE node_id = ? AND org_id = ?`, fmtTime(tx.Now), nodeID, a.OrgID)
		return err
	})
	if err == nil && s.onRevoke != nil {
		s.onRevoke(nodeID)
	}
	return err
}

// OnRevoke sets what runs after an edge was revoked.
func (s *EnrolmentService) OnRevoke(fn func(nodeID string)) { s.onRevoke = fn }
