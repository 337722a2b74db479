package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func HashSecret(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// SyncNode is an enrolled edge as the hub knows it.
type SyncNode struct {
	NodeID, OrgID, LocationID string
	EnrolledAt                time.Time
}

// FindSyncNode returns the enrolled, unrevoked edge nodeID, or nil. With
// checkSecret its link secret must also match secret (hashes compared in
// constant time); without, secret is ignored (the caller has already
// authenticated the edge, by its leaf connection).
func (db *DB) FindSyncNode(ctx context.Context, nodeID, secret string, checkSecret bool) *SyncNode {
	var n SyncNode
	var hash, enrolled string
	err := db.Reader.QueryRowContext(ctx, `SELECT node_id, org_id, location_id, secret_hash, enrolled_at FROM sync_nodes
		WHERE node_id = ? AND revoked_at IS NULL`, nodeID).Scan(&n.NodeID, &n.OrgID, &n.LocationID, &hash, &enrolled)
	if err != nil {
		return nil
	}
	if checkSecret && subtle.ConstantTimeCompare([]byte(hash), []byte(HashSecret(secret))) != 1 {
		return nil
	}
	n.EnrolledAt = ParseTime(enrolled)
	return &n
}

// SyncNodes lists an org's enrolled edges.
func (db *DB) SyncNodes(ctx context.Context, orgID string) ([]SyncNode, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT node_id, org_id, location_id, enrolled_at FROM sync_nodes
		WHERE org_id = ? AND revoked_at IS NULL ORDER BY enrolled_at`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SyncNode
	for rows.Next() {
		var n SyncNode
		var enrolled string
		if err := rows.Scan(&n.NodeID, &n.OrgID, &n.LocationID, &enrolled); err != nil {
			return nil, err
		}
		n.EnrolledAt = ParseTime(enrolled)
		out = append(out, n)
	}
	return out, rows.Err()
}

// LogCount counts the log entries in a scope after seq, leaving out those
// from excludeOrigin: what an edge has yet to pull.
func (db *DB) LogCount(ctx context.Context, seq int64, scope Scope, excludeOrigin string) (int64, error) {
	var n int64
	err := db.Reader.QueryRowContext(ctx, `SELECT count(*) FROM `+db.dialect().LogFrom("")+` WHERE `+db.dialect().LogAfter("seq", "?1")+` AND org_id = ?
		AND (location_id IS NULL OR location_id = ?) AND origin != ?`, seq, scope.OrgID, scope.LocationID, excludeOrigin).Scan(&n)
	return n, err
}

// digestSkip are bookkeeping columns left out of digests: how a node
// stamped a row, not what the row says.
var digestSkip = map[string]bool{"hlc": true, "origin": true, "field_hlc": true}

// Digests returns a SHA-256 of each digested noun's rows (noun.digest) in a scope, in
// id order, with JSON values normalized (keys sorted), so that two nodes
// holding the same data compute the same digests.
func (db *DB) Digests(ctx context.Context, orgID, locationID string) (map[string]string, error) {
	return db.DigestsAt(ctx, orgID, locationID, nil)
}

// DigestsAt is Digests as an edge of an older change-record format
// computes them: over the tables and columns of its schema only (the hub
// verifies an older edge with it). A nil schema is this build's own.
func (db *DB) DigestsAt(ctx context.Context, orgID, locationID string, schema *Schema) (map[string]string, error) {
	scopes := digestScopes()
	out := make(map[string]string, len(scopes))
	names := make([]string, 0, len(scopes))
	for t := range scopes {
		if schema == nil || schema.Columns[t] != nil {
			names = append(names, t)
		}
	}
	sort.Strings(names)
	for _, table := range names {
		args := []any{orgID}
		if strings.Contains(scopes[table], "?2") {
			args = append(args, locationID)
		}
		sel := "*"
		if schema != nil {
			sel = strings.Join(schema.Columns[table], ", ")
		}
		rows, err := db.Reader.QueryContext(ctx, "SELECT "+sel+" FROM "+table+" WHERE "+scopes[table]+" ORDER BY id", args...)
		if err != nil {
			return nil, fmt.Errorf("digest %s: %w", table, err)
		}
		cols, _ := rows.Columns()
		h := sha256.New()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		n := 0
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, err
			}
			for i, c := range cols {
				if digestSkip[c] {
					continue
				}
				h.Write([]byte(c))
				h.Write([]byte{0})
				h.Write([]byte(Canonical(vals[i])))
				h.Write([]byte{0})
			}
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		out[table] = strconv.Itoa(n) + ":" + hex.EncodeToString(h.Sum(nil))
	}
	return out, nil
}
