package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kassa.dev/shared/eventbus"
	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// logged reads a node's whole event log.
func logged(t *testing.T, db *DB) []LoggedEvent {
	t.Helper()
	es, err := db.EventsAfter(context.Background(), 0, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func typesOf(es []LoggedEvent) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}

// TestEventsAreLoggedInTheUnitThatCausesThem: a sale's events are in the
// log, in order, with the resource as data and the ids the bus announced;
// a unit that fails leaves no event behind.
func TestEventsAreLoggedInTheUnitThatCausesThem(t *testing.T) {
	bus := eventbus.New()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "k.db"), Options{Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	n := wrapNode(t, db)
	w := seed(t, n)
	sub := bus.Subscribe(100, func(e kassa.Event) bool {
		return strings.HasPrefix(e.Type, "order.") || strings.HasPrefix(e.Type, "payment.")
	})
	defer sub.Close()
	before := len(logged(t, db))
	o := sell(t, n, w, w.p1, 1)
	es := logged(t, db)[before:]
	if got, want := typesOf(es), []string{kassa.EventOrderCreated, kassa.EventPaymentCaptured, kassa.EventOrderCompleted}; !slices.Equal(got, want) {
		t.Fatalf("a sale logged %v, want %v", got, want)
	}
	for _, e := range es {
		bused := <-sub.C
		if bused.ID != e.ID || bused.Type != e.Type || !kassa.ValidID(e.ID) || e.OrgID != w.org || e.LocationID != w.loc ||
			e.Origin != db.NodeID || e.OccurredAt.IsZero() {
			t.Fatalf("logged %+v, announced %+v", e, bused)
		}
	}
	var done kassa.Order
	if err := json.Unmarshal(es[2].Data.(json.RawMessage), &done); err != nil {
		t.Fatal(err)
	}
	if done.ID != o.ID || done.Status != kassa.OrderCompleted || done.Number != o.Number || len(done.Payments) != 1 || len(done.LineItems) != 1 {
		t.Fatalf("order.completed data %+v", done)
	}
	// A refused operation (completing an unpaid order) logs nothing.
	open, err := n.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p2, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.orders.CompleteOrder(w.ctx, open.ID); err == nil {
		t.Fatal("completed an unpaid order")
	}
	if got := typesOf(logged(t, db)[before+3:]); !slices.Equal(got, []string{kassa.EventOrderCreated}) {
		t.Fatalf("after a refused completion the log grew by %v", got)
	}
	// A unit that emits and then fails is rolled back with its events,
	// also when it shares its commit with a unit that succeeds.
	boom := errors.New("boom")
	errs := make(chan error, 2)
	go func() {
		errs <- db.Write(w.ctx, func(tx *Tx) error {
			tx.Emit(w.org, w.loc, kassa.EventInventoryStockout, map[string]any{"rolled": "back"})
			return boom
		})
	}()
	go func() {
		errs <- db.Write(w.ctx, func(tx *Tx) error {
			tx.Emit(w.org, w.loc, kassa.EventInventoryLowStock, map[string]any{"kept": true})
			return nil
		})
	}()
	for range 2 {
		if err := <-errs; err != nil && !errors.Is(err, boom) {
			t.Fatal(err)
		}
	}
	if got := typesOf(logged(t, db)[before+4:]); !slices.Equal(got, []string{kassa.EventInventoryLowStock}) {
		t.Fatalf("log after a failed and a good unit: %v", got)
	}
}

// TestAReaderThatSavesItsPositionSeesEveryEventOnce: a reader that reads
// a few events at a time and saves its position after processing them
// sees each event exactly once, across a restart of the store.
func TestAReaderThatSavesItsPositionSeesEveryEventOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := wrapNode(t, db)
	w := seed(t, n)
	seen := map[string]int{}
	var saved int64
	read := func(db *DB) {
		for {
			es, err := db.EventsAfter(context.Background(), saved, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) == 0 {
				return
			}
			for _, e := range es {
				if e.Seq <= saved {
					t.Fatalf("event %d at or before the saved position %d", e.Seq, saved)
				}
				seen[e.ID]++
			}
			saved = es[len(es)-1].Seq
		}
	}
	sell(t, n, w, w.p1, 1)
	read(db)
	sell(t, n, w, w.p2, 1) // made while the reader is not reading
	db.Close()
	db, err = Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n = wrapNode(t, db)
	sell(t, n, w, w.p1, 1)
	read(db)
	all := logged(t, db)
	if len(seen) != len(all) || len(all) < 9 {
		t.Fatalf("the reader saw %d events, the log holds %d", len(seen), len(all))
	}
	for _, e := range all {
		if seen[e.ID] != 1 {
			t.Fatalf("event %s %s seen %d times", e.ID, e.Type, seen[e.ID])
		}
	}
}

// edgeAndHub is a hub (Options.Hub) and an edge that holds the hub's data.
func edgeAndHub(t *testing.T) (edge, hub *node, w world) {
	t.Helper()
	hdb, err := Open(context.Background(), filepath.Join(t.TempDir(), "hub.db"), Options{Hub: true})
	if err != nil {
		t.Fatal(err)
	}
	hub, edge = wrapNode(t, hdb), mustNode(t)
	w = seed(t, hub)
	ship(t, hub, edge)
	edge.db.SetUnderHub()
	return edge, hub, w
}

// push ingests at the hub what the edge has not pushed yet, through JSON
// as the wire carries it, and marks it sent.
func push(t *testing.T, edge, hub *node, w world) ApplyResult {
	t.Helper()
	log, err := edge.db.ChangesAfter(context.Background(), 0, 1_000_000, LogFilter{Unsent: true})
	if err != nil {
		t.Fatal(err)
	}
	res, q, err := hub.db.Ingest(context.Background(), EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}, wire(t, log))
	if err != nil || q != 0 {
		t.Fatalf("ingest: %v, %d quarantined", err, q)
	}
	return res
}

// TestAnEdgesEventsReachTheHubOnce: the events of a sale at an edge are in
// the hub's log once, with their ids, origin and occurred_at from the
// edge, however often the push is replayed; the hub's own events and the
// edge's are never in the log edges pull.
func TestAnEdgesEventsReachTheHubOnce(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	if n := len(logged(t, hub.db)); n == 0 {
		t.Fatal("the hub's own work logged no events")
	}
	hubBefore := logged(t, hub.db)
	sell(t, edge, w, w.p1, 1)
	mine := logged(t, edge.db)
	if len(mine) != 3 {
		t.Fatalf("edge logged %v", typesOf(mine))
	}
	all, err := edge.db.ChangesAfter(context.Background(), 0, 1_000_000, LogFilter{Unsent: true})
	if err != nil {
		t.Fatal(err)
	}
	push(t, edge, hub, w)
	for range 2 { // replays of the same records, whole and one by one
		if res, q, err := hub.db.Ingest(context.Background(), EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}, wire(t, all)); err != nil || q != 0 || res.Applied != 0 {
			t.Fatalf("replay: %+v %d %v", res, q, err)
		}
		for _, c := range wire(t, all) {
			if _, _, err := hub.db.Ingest(context.Background(), EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}, []change.Change{c}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := logged(t, hub.db)[len(hubBefore):]
	if len(got) != len(mine) {
		t.Fatalf("hub logged %v of the edge's %v", typesOf(got), typesOf(mine))
	}
	for i, e := range got {
		m := mine[i]
		if e.ID != m.ID || e.Type != m.Type || !e.OccurredAt.Equal(m.OccurredAt) || e.Origin != edge.db.NodeID || e.LocationID != w.loc ||
			string(e.Data.(json.RawMessage)) != string(m.Data.(json.RawMessage)) {
			t.Fatalf("hub has %+v, edge made %+v", e, m)
		}
	}
	// The hub's log of changes (what edges pull) holds no events.
	down, err := hub.db.ChangesAfter(context.Background(), 0, 1_000_000, LogFilter{Scope: &Scope{OrgID: w.org, LocationID: w.loc}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range down {
		if c.Entity == entEvent.Name {
			t.Fatalf("the hub's log carries event %s down to edges", c.EntityID)
		}
	}
}

// TestEventSubjectsCompareOnlyColumnsThatNeverChange: an event's data is
// checked against its row's columns that no node changes after the insert;
// a column an update may change (an order's customer, which the hub may
// attach while the edge completes the sale) or that a duplicate settles
// (a sku the hub renames) would quarantine honest events.
func TestEventSubjectsCompareOnlyColumnsThatNeverChange(t *testing.T) {
	about := map[string]string{}
	for _, r := range registered() {
		for typ, sub := range r.Events {
			if other, ok := about[typ]; ok {
				t.Errorf("%s is about %s and %s: one noun registers an event type", typ, other, r.Name)
			}
			about[typ] = r.Name
			if sub.Table != r.Table {
				t.Errorf("%s: table %s is not its noun's", typ, sub.Table)
				continue
			}
			for _, col := range sub.Same {
				if r.Edge != nil && (slices.Contains(r.Edge.Update, col) || slices.Contains(r.Edge.System, col)) {
					t.Errorf("%s compares %s.%s, which an update may change", typ, sub.Table, col)
				}
				if r.Unique != nil && r.Unique.Col == col {
					t.Errorf("%s compares %s.%s, which a duplicate may rename", typ, sub.Table, col)
				}
			}
		}
	}
}

// TestTheHubAdmitsOnlyAnEdgesOwnEvents: a forged event is quarantined with
// its reason; an honest one is kept. An event must be about a row the hub
// admitted from that edge, and give that row's never-changing columns as
// the hub holds them.
func TestTheHubAdmitsOnlyAnEdgesOwnEvents(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	other := mustLocation(t, hub.db, w.org)
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	sale := sell(t, edge, w, w.p1, 1)
	push(t, edge, hub, w)
	now := fmtTime(hub.db.Now())
	subject := func(mod func(d map[string]any)) string {
		d := map[string]any{"id": sale.ID, "customer_id": nil, "number": sale.Number, "currency": sale.Currency, "total": 1}
		if mod != nil {
			mod(d)
		}
		b, _ := json.Marshal(d)
		return string(b)
	}
	event := func(mod func(c *change.Change)) change.Change {
		id := edge.db.NewID()
		c := change.Change{ID: edge.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: "event", EntityID: id, Op: change.OpInsert,
			Fields: map[string]any{"id": id, "org_id": w.org, "location_id": w.loc, "type": kassa.EventOrderCompleted,
				"data": subject(nil), "occurred_at": now, "created_at": now, "updated_at": now},
			HLC: edge.db.Clock.Now(), Origin: edge.db.NodeID, Actor: kassa.ActorFrom(w.ctx).UserID}
		if mod != nil {
			mod(&c)
		}
		return c
	}
	// An event about the edge's sale, made by the node itself (no actor),
	// with its own account of what moves (the total), is kept.
	ok := event(func(c *change.Change) { c.Actor = "" })
	if res, q, err := hub.db.Ingest(context.Background(), from, wire(t, []LogEntry{{Change: ok}})); err != nil || q != 0 || res.Applied != 1 {
		t.Fatalf("honest event: %+v %d %v", res, q, err)
	}
	okData := ok.Fields["data"].(string)
	// The hub attached a customer to the order meanwhile; the edge, which
	// has not pulled that yet, tells of the order as it holds it: kept (a
	// customer can change on an order, so the event's is the edge's account).
	attached := event(func(c *change.Change) {
		c.Actor = ""
		c.Fields["data"] = subject(func(d map[string]any) { d["customer_id"] = hub.db.NewID() })
	})
	if res, q, err := hub.db.Ingest(context.Background(), from, wire(t, []LogEntry{{Change: attached}})); err != nil || q != 0 || res.Applied != 1 {
		t.Fatalf("an event giving a customer the hub does not hold on the order: %+v %d %v", res, q, err)
	}
	// Another location's order, for the case of an event about it.
	hubSale, err := hub.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: other, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, reason string
		mod          func(c *change.Change)
	}{
		{"another location's", RefusedScope, func(c *change.Change) { c.LocationID, c.Fields["location_id"] = other, other }},
		{"a location that is not the record's", RefusedScope, func(c *change.Change) { c.LocationID = "" }},
		{"a type outside the catalog", RefusedValue, func(c *change.Change) { c.Fields["type"] = "order.stolen" }},
		{"oversized data", RefusedValue, func(c *change.Change) { c.Fields["data"] = `{"x":"` + strings.Repeat("a", kassa.MaxEventData) + `"}` }},
		{"data that is not an object", RefusedValue, func(c *change.Change) { c.Fields["data"] = `[1]` }},
		{"a bad time", RefusedValue, func(c *change.Change) { c.Fields["occurred_at"] = "yesterday" }},
		{"a log position", RefusedField, func(c *change.Change) { c.Fields["seq"] = 1 }},
		{"another node's", RefusedScope, func(c *change.Change) { c.Origin = hub.db.NewID() }},
		{"an unknown actor's", RefusedActor, func(c *change.Change) { c.Actor = hub.db.NewID() }},
		{"a change of a logged event", RefusedEntity, func(c *change.Change) {
			c.Op, c.EntityID, c.Fields = change.OpUpdate, ok.EntityID, map[string]any{"data": `{"id":"y"}`}
		}},
		{"about an order the hub does not hold", RefusedReference, func(c *change.Change) {
			c.Fields["data"] = subject(func(d map[string]any) { d["id"] = hub.db.NewID() })
		}},
		{"about another location's order", RefusedReference, func(c *change.Change) {
			c.Fields["data"] = subject(func(d map[string]any) { d["id"], d["number"] = hubSale.ID, hubSale.Number })
		}},
		{"with another number than the order's", RefusedValue, func(c *change.Change) {
			c.Fields["data"] = subject(func(d map[string]any) { d["number"] = "X-000001" })
		}},
		{"in another currency than the order's", RefusedValue, func(c *change.Change) {
			c.Fields["data"] = subject(func(d map[string]any) { d["currency"] = "NZD" })
		}},
		{"of the hub's own kind", RefusedEntity, func(c *change.Change) { c.Fields["type"] = kassa.EventCampaignLaunched }},
		{"of a kind no store makes", RefusedEntity, func(c *change.Change) { c.Fields["type"] = kassa.EventAutomationTriggered }},
	} {
		// Each alone, and decoded ahead of its unit as the hub's link
		// does while the edge's push before it applies (Prepare).
		for _, ahead := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, decoded ahead %v", tc.name, ahead), func(t *testing.T) {
				c := event(tc.mod)
				cs := wire(t, []LogEntry{{Change: c}})
				if ahead {
					hub.db.Prepare(cs)
				}
				_, q, err := hub.db.Ingest(context.Background(), from, cs)
				if err != nil || q != 1 {
					t.Fatalf("ingest: %v, %d quarantined", err, q)
				}
				var reason string
				if err := hub.db.Reader.QueryRow(`SELECT reason FROM sync_quarantine WHERE id = ?`, c.ID).Scan(&reason); err != nil || reason != tc.reason {
					t.Fatalf("reason %q (%v), want %s", reason, err, tc.reason)
				}
				var data string
				hub.db.Reader.QueryRow(`SELECT data FROM events WHERE id = ?`, c.EntityID).Scan(&data)
				if data != "" && c.EntityID != ok.EntityID || c.EntityID == ok.EntityID && data != okData {
					t.Fatalf("a refused event is in the hub's log: %s", data)
				}
			})
		}
	}
}

// TestAnEdgeStoresAnEventsDataOnce: an edge's event is in its log once,
// not again in its change record (which pushes it to the hub): the
// record read back carries the fields a row write of the event records,
// the event's data among them.
func TestAnEdgeStoresAnEventsDataOnce(t *testing.T) {
	edge, _, w := edgeAndHub(t)
	sell(t, edge, w, w.p1, 1)
	var stored int
	if err := edge.db.Reader.QueryRow(`SELECT coalesce(sum(length(fields)), 0) FROM outbox WHERE entity = 'event'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 0 {
		t.Fatalf("the edge's event records store %d bytes of fields, want the events rows to hold them", stored)
	}
	for _, e := range logged(t, edge.db) {
		cs, err := edge.db.Changes(context.Background(), entEvent.Name, e.ID)
		if err != nil || len(cs) != 1 {
			t.Fatalf("event %s's records: %v %v", e.ID, cs, err)
		}
		f := cs[0].Fields
		want := map[string]any{"id": e.ID, "org_id": e.OrgID, "location_id": w.loc, "type": e.Type, "data": string(e.Data.(json.RawMessage)),
			"occurred_at": e.OccurredAt.UTC().Format(TimeFormat)}
		for k, v := range want {
			if f[k] != v {
				t.Fatalf("event %s's record: %s = %v, want %v", e.ID, k, f[k], v)
			}
		}
		if len(f) != 8 || f["created_at"] == nil || f["updated_at"] == nil || cs[0].Origin != edge.db.NodeID || cs[0].Op != change.OpInsert {
			t.Fatalf("event %s's record: %+v", e.ID, cs[0])
		}
	}
}
