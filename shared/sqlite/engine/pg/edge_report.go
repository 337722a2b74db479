package pg

import (
	"context"
	"encoding/json"
	"time"
)

// EdgeReport is a hub's last word on one edge in the edge book
// (edge_reports; sqlite.EdgeReport's saved fields).
type EdgeReport struct {
	NodeID                   string
	LastSeen, ConnectedSince time.Time
	Cursor                   int64
	PendingUp                int
	Version                  string
	ReportedAt, LastVerified time.Time // zero: never
	VerifyOK                 *bool
	VerifyDiffer             []string
	LagP50, LagP99           float64
}

// SaveEdgeReports writes the entries hub hubID changed in its edge book.
// Each replaces the edge's row unless the row is newer: another hub heard
// the edge after this one did (it moved there), so an edge's row is the
// word of the hub that heard it last, whichever hub writes last. seen_at
// is LastSeen, when the hub heard the edge.
func SaveEdgeReports(ctx context.Context, q Querier, hubID string, rs []EdgeReport) error {
	for _, r := range rs {
		differ, _ := json.Marshal(r.VerifyDiffer)
		if r.VerifyDiffer == nil {
			differ = []byte("[]")
		}
		var ok any
		if r.VerifyOK != nil {
			ok = 0
			if *r.VerifyOK {
				ok = 1
			}
		}
		if _, err := q.Exec(ctx, `INSERT INTO edge_reports AS r (node_id, last_seen, connected_since, cursor, pending_up, version,
				reported_at, last_verified, verify_ok, verify_differ, lag_p50, lag_p99, hub_id, seen_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT (node_id) DO UPDATE SET last_seen = excluded.last_seen, connected_since = excluded.connected_since,
				cursor = excluded.cursor, pending_up = excluded.pending_up, version = excluded.version, reported_at = excluded.reported_at,
				last_verified = excluded.last_verified, verify_ok = excluded.verify_ok, verify_differ = excluded.verify_differ,
				lag_p50 = excluded.lag_p50, lag_p99 = excluded.lag_p99, hub_id = excluded.hub_id, seen_at = excluded.seen_at
			WHERE r.seen_at <= excluded.seen_at`,
			r.NodeID, textTime(r.LastSeen), textTime(r.ConnectedSince), r.Cursor, r.PendingUp, r.Version,
			nullTime(r.ReportedAt), nullTime(r.LastVerified), ok, string(differ), r.LagP50, r.LagP99, hubID, r.LastSeen); err != nil {
			return err
		}
	}
	return nil
}

// EdgeHub is the hub that last heard an edge, and when.
type EdgeHub struct {
	HubID  string
	SeenAt time.Time
}

// EdgeHubs returns, by node id, the hub each edge in the book was last
// heard by (the ops page's "attached to").
func EdgeHubs(ctx context.Context, q Rows) (map[string]EdgeHub, error) {
	rows, err := q.Query(ctx, `SELECT node_id, hub_id, seen_at FROM edge_reports`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]EdgeHub{}
	for rows.Next() {
		var id string
		var h EdgeHub
		if err := rows.Scan(&id, &h.HubID, &h.SeenAt); err != nil {
			return nil, err
		}
		out[id] = h
	}
	return out, rows.Err()
}

func textTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// nullTime stores a zero time as NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return textTime(t)
}
