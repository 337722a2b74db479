package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"kassa.dev/shared/sqlite/engine"
)

// EdgeReport is the hub's last word on one edge (table edge_reports):
// when it was seen, how far it pulled, and the figures it reported.
type EdgeReport struct {
	NodeID, OrgID, LocationID string // org and location: from sync_nodes, on read
	LastSeen, ConnectedSince  time.Time
	Cursor                    int64
	PendingUp                 int
	Version                   string
	ReportedAt, LastVerified  time.Time // zero: never
	VerifyOK                  *bool
	VerifyDiffer              []string
	LagP50, LagP99            float64
}

// timeOrNull stores a zero time as NULL.
func timeOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return fmtTime(t)
}

// SaveEdgeReports writes the reports in one unit of work, replacing each
// edge's previous one.
func (db *DB) SaveEdgeReports(ctx context.Context, rs []EdgeReport) error {
	if len(rs) == 0 {
		return nil
	}
	return db.Write(ctx, func(tx *Tx) error {
		for _, r := range rs {
			differ, _ := json.Marshal(r.VerifyDiffer)
			if r.VerifyDiffer == nil {
				differ = []byte("[]")
			}
			var ok any
			if r.VerifyOK != nil {
				ok = *r.VerifyOK
			}
			if _, err := tx.ExecCached(ctx, `INSERT INTO edge_reports (node_id, last_seen, connected_since, cursor, pending_up, version,
				reported_at, last_verified, verify_ok, verify_differ, lag_p50, lag_p99) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT(node_id) DO UPDATE SET last_seen = excluded.last_seen, connected_since = excluded.connected_since,
				cursor = excluded.cursor, pending_up = excluded.pending_up, version = excluded.version, reported_at = excluded.reported_at,
				last_verified = excluded.last_verified, verify_ok = excluded.verify_ok, verify_differ = excluded.verify_differ,
				lag_p50 = excluded.lag_p50, lag_p99 = excluded.lag_p99`,
				r.NodeID, fmtTime(r.LastSeen), fmtTime(r.ConnectedSince), r.Cursor, r.PendingUp, r.Version,
				timeOrNull(r.ReportedAt), timeOrNull(r.LastVerified), ok, string(differ), r.LagP50, r.LagP99); err != nil {
				return err
			}
		}
		return nil
	})
}

// EdgeReports reads the saved report of every enrolled, unrevoked edge.
func (db *DB) EdgeReports(ctx context.Context) ([]EdgeReport, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT r.node_id, n.org_id, n.location_id, r.last_seen, r.connected_since, r.cursor,
		r.pending_up, r.version, r.reported_at, r.last_verified, r.verify_ok, r.verify_differ, r.lag_p50, r.lag_p99
		FROM edge_reports r JOIN sync_nodes n ON n.node_id = r.node_id WHERE n.revoked_at IS NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []EdgeReport
	for rows.Next() {
		var r EdgeReport
		var seen, since, differ string
		var reported, verified sql.NullString
		var ok sql.Null[bool]
		if err := rows.Scan(&r.NodeID, &r.OrgID, &r.LocationID, &seen, &since, &r.Cursor, &r.PendingUp, &r.Version,
			&reported, &verified, &ok, &differ, &r.LagP50, &r.LagP99); err != nil {
			return nil, err
		}
		r.LastSeen, r.ConnectedSince = parseTime(seen), parseTime(since)
		if reported.Valid {
			r.ReportedAt = parseTime(reported.String)
		}
		if verified.Valid {
			r.LastVerified = parseTime(verified.String)
		}
		r.VerifyOK = nullPtr(ok)
		json.Unmarshal([]byte(differ), &r.VerifyDiffer)
		out = append(out, r)
	}
	return out, rows.Err()
}

// EdgeCursor is an edge and how far it pulled the hub's log.
type EdgeCursor struct {
	NodeID, OrgID, LocationID string
	Cursor                    int64
}

// PendingDown counts, for each edge, the log entries in its scope after
// its cursor that it did not make itself (what it has yet to pull), in
// one query whatever the number of edges. The result is keyed by node id.
func (db *DB) PendingDown(ctx context.Context, edges []EdgeCursor) (map[string]int64, error) {
	out := make(map[string]int64, len(edges))
	if len(edges) == 0 {
		return out, nil
	}
	type row struct {
		N string `json:"n"`
		O string `json:"o"`
		L string `json:"l"`
		C int64  `json:"c"`
	}
	rs := make([]row, len(edges))
	for i, e := range edges {
		rs[i] = row{e.NodeID, e.OrgID, e.LocationID, e.Cursor}
	}
	b, _ := json.Marshal(rs)
	// Two index range scans per edge (outbox_scope): its location's
	// entries and the org-wide ones after its cursor.
	after := engine.D(db.Reader).LogAfter("o.seq", "e.cur")
	rows, err := db.Reader.QueryContext(ctx, `WITH e AS MATERIALIZED (SELECT value->>'n' AS node, value->>'o' AS org, value->>'l' AS loc,
			CAST(value->>'c' AS INTEGER) AS cur FROM `+engine.D(db.Reader).JSONElements("?", "j")+`)
		SELECT e.node,
			(SELECT count(*) FROM outbox o WHERE o.org_id = e.org AND o.location_id = e.loc AND `+after+` AND o.origin != e.node) +
			(SELECT count(*) FROM outbox o WHERE o.org_id = e.org AND o.location_id IS NULL AND `+after+` AND o.origin != e.node)
		FROM e`, string(b))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var node string
		var n int64
		if err := rows.Scan(&node, &n); err != nil {
			return nil, err
		}
		out[node] = n
	}
	return out, rows.Err()
}

// OpenConflictCount is how many open conflicts a location (or, with an
// empty location, the org) has, and how many of those are quarantined
// records.
type OpenConflictCount struct {
	OrgID, LocationID string
	Open, Quarantined int
}

// OpenConflicts counts the open conflicts per org and location; orgID ""
// counts every org's.
func (db *DB) OpenConflicts(ctx context.Context, orgID string) ([]OpenConflictCount, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT org_id, coalesce(location_id, ''), count(*), sum(CASE WHEN kind = 'quarantined' THEN 1 ELSE 0 END)
		FROM sync_conflicts WHERE status = 'open' AND (?1 = '' OR org_id = ?1) GROUP BY org_id, location_id`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OpenConflictCount
	for rows.Next() {
		var c OpenConflictCount
		if err := rows.Scan(&c.OrgID, &c.LocationID, &c.Open, &c.Quarantined); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// OpenConflictKinds counts every org's open conflicts per kind: org →
// kind → count.
func (db *DB) OpenConflictKinds(ctx context.Context) (map[string]map[string]int, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT org_id, kind, count(*) FROM sync_conflicts WHERE status = 'open' GROUP BY org_id, kind`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]map[string]int{}
	for rows.Next() {
		var org, kind string
		var n int
		if err := rows.Scan(&org, &kind, &n); err != nil {
			return nil, err
		}
		if out[org] == nil {
			out[org] = map[string]int{}
		}
		out[org][kind] = n
	}
	return out, rows.Err()
}

// EnrolNodes enrols count edges of an org's location directly, without
// tokens or secrets that work (for tests and measurements of a hub with
// many edges), and returns their node ids.
func (db *DB) EnrolNodes(ctx context.Context, orgID, locationID string, count int) ([]string, error) {
	ids := make([]string, count)
	err := db.Write(ctx, func(tx *Tx) error {
		for i := range ids {
			ids[i] = db.NewID()
			if _, err := tx.ExecCached(ctx, `INSERT INTO sync_nodes (node_id, org_id, location_id, secret_hash, enrolled_at) VALUES (?, ?, ?, ?, ?)`,
				ids[i], orgID, locationID, "-", fmtTime(tx.Now)); err != nil {
				return err
			}
		}
		return nil
	})
	return ids, err
}
