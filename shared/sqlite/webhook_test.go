package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// hookAt registers an endpoint of org at the hub's store directly.
func hookAt(t *testing.T, db *DB, org, status string, events ...string) string {
	t.Helper()
	id := db.NewID()
	ev, _ := json.Marshal(events)
	if err := db.Exec(context.Background(), `INSERT INTO webhook_endpoints (id, org_id, url, events, description, status, secret, created_at, updated_at)
		VALUES (?, ?, 'https://example.com/hook', ?, '', ?, 'whsec_x', '', '')`, id, org, string(ev), status); err != nil {
		t.Fatal(err)
	}
	return id
}

// queued returns the event ids of an endpoint's deliveries, with their count.
func queued(t *testing.T, db *DB, endpoint string) map[string]int {
	t.Helper()
	rows, err := db.Reader.Query(`SELECT coalesce(event_id, ''), event_type, body FROM webhook_deliveries WHERE endpoint_id = ?`, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id, typ string
		var body []byte
		if err := rows.Scan(&id, &typ, &body); err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil || len(m) != 2 || string(m["event"]) != `"`+typ+`"` {
			t.Fatalf("delivery body %s", body)
		}
		out[id]++
	}
	return out
}

// TestWebhookDeliveriesAreQueuedWithTheirEventOnce: at the hub an event's
// deliveries are committed in the event's unit, for the subscribed active
// endpoints of its org only; a unit that fails leaves none; an edge's
// event queues its deliveries once however often it is replayed, also
// under a new change id.
func TestWebhookDeliveriesAreQueuedWithTheirEventOnce(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	ctx := context.Background()
	all := hookAt(t, hub.db, w.org, kassa.WebhookActive, kassa.WebhookAllEvents)
	orders := hookAt(t, hub.db, w.org, kassa.WebhookActive, kassa.EventOrderCreated)
	paused := hookAt(t, hub.db, w.org, kassa.WebhookInactive, kassa.WebhookAllEvents)

	if err := hub.db.Write(ctx, func(tx *Tx) error {
		tx.Emit(w.org, "", kassa.EventCustomerCreated, map[string]string{"id": "c1"})
		return errors.New("rolled back")
	}); err == nil {
		t.Fatal("the unit did not fail")
	}
	if q := queued(t, hub.db, all); len(q) != 0 {
		t.Fatalf("a rolled-back event queued %v", q)
	}
	if err := hub.db.Write(ctx, func(tx *Tx) error {
		tx.Emit(w.org, "", kassa.EventCustomerCreated, map[string]string{"id": "c2"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if q := queued(t, hub.db, all); len(q) != 1 {
		t.Fatalf("the hub's own event queued %v", q)
	}

	sell(t, edge, w, w.p1, 1)
	mine := logged(t, edge.db)
	log, err := edge.db.ChangesAfter(ctx, 0, 1_000_000, LogFilter{Unsent: true})
	if err != nil {
		t.Fatal(err)
	}
	push(t, edge, hub, w)
	var again []change.Change
	for _, c := range wire(t, log) {
		if c.Entity == entEvent.Name {
			c.ID = edge.db.NewID() // a repair sends the row under a new change id
			again = append(again, c)
		}
	}
	if _, _, err := hub.db.Ingest(ctx, EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}, again); err != nil {
		t.Fatal(err)
	}
	q := queued(t, hub.db, all)
	for _, e := range mine {
		if q[e.ID] != 1 {
			t.Fatalf("edge event %s %s queued %d times", e.ID, e.Type, q[e.ID])
		}
	}
	created := 0
	for _, e := range mine {
		if e.Type == kassa.EventOrderCreated {
			created++
		}
	}
	if q := queued(t, hub.db, orders); len(q) != created {
		t.Fatalf("order.created endpoint queued %v, want %d", q, created)
	}
	if q := queued(t, hub.db, paused); len(q) != 0 {
		t.Fatalf("an inactive endpoint queued %v", q)
	}
	if q := queued(t, edge.db, all); len(q) != 0 {
		t.Fatalf("the edge queued %v", q)
	}
}
