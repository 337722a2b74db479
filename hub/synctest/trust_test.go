package synctest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"kassa.dev/shared/demo"
	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
	"kassa.dev/sync/link"
	"kassa.dev/sync/natsnode"
	"kassa.dev/sync/wait"
)

// forger is a compromised store machine: it holds an edge's real leaf
// credentials and pushes whatever change records it likes over a real
// leaf link.
type forger struct {
	id link.Identity
	nc *nats.Conn
}

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// mustForge enrols a node at a location with a fresh token and connects
// to the hub's leaf port with the credentials the hub handed out.
func (e *env) mustForge(t *testing.T, location string) *forger {
	t.Helper()
	var en oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/locations/"+location+"/enrolment", e.hubTok, nil, &en); st != 201 {
		t.Fatalf("enrolment token: %d %v", st, en)
	}
	var claim oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/sync/enrol", "", map[string]any{"token": en.Data["token"]}, &claim); st != 200 {
		t.Fatalf("claim: %d %v", st, claim)
	}
	id := link.Identity{Org: claim.Data["org_id"].(string), Location: claim.Data["location_id"].(string), Node: claim.Data["node_id"].(string)}
	leaf := strings.TrimPrefix(field(e.hub.Output(), "leaf "), "nats-leaf://")
	ns, err := natsnode.Start(natsnode.Config{Name: "forger", StoreDir: t.TempDir(),
		LeafRemotes: []string{fmt.Sprintf("nats-leaf://%s:%s@%s", id.Node, claim.Data["leaf_password"], leaf)}},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	wait.For(t, 10*time.Second, "the forger's leaf link", ns.LeafConnected)
	nc, err := ns.Connect("forger", "", nats.CustomInboxPrefix(id.InboxPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return &forger{id: id, nc: nc}
}

// change builds a record as the forger's node would stamp it.
func (f *forger) change(entity, entityID string, op change.Op, location, actor string, fields map[string]any) change.Change {
	return change.Change{ID: newID(), OrgID: f.id.Org, LocationID: location, Entity: entity, EntityID: entityID, Op: op,
		Fields: fields, HLC: hlc.Timestamp{Wall: time.Now().UnixMilli()}, Origin: f.id.Node, Actor: actor}
}

// push sends records up as the edge's link does and returns the hub's reply.
func (f *forger) push(t *testing.T, cs ...change.Change) link.PushReply {
	t.Helper()
	b, _ := json.Marshal(link.PushRequest{Changes: cs})
	// The link may still be settling its subscriptions: retry until the hub answers.
	var rep link.PushReply
	wait.For(t, 10*time.Second, "the hub to answer a push", func() bool {
		m, err := f.nc.Request(f.id.UpSubject(), b, 2*time.Second)
		if err != nil {
			return false
		}
		rep = link.PushReply{}
		return json.Unmarshal(m.Data, &rep) == nil
	})
	return rep
}

// hubState reads what a user of the hub would see.
type hubState struct {
	e   *env
	tok string
}

func (h hubState) get(t *testing.T, path string) map[string]any {
	t.Helper()
	var r oneResp
	if st := h.e.hub.Call(t, "GET", path, h.tok, nil, &r); st != 200 {
		t.Fatalf("GET %s: %d", path, st)
	}
	return r.Data
}

func (h hubState) list(t *testing.T, path string) []map[string]any {
	t.Helper()
	var r listResp
	if st := h.e.hub.Call(t, "GET", path, h.tok, nil, &r); st != 200 {
		t.Fatalf("GET %s: %d", path, st)
	}
	return r.Data
}

func metricsText(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// TestForgedChangesOverTheLeafLinkAreRefused plays a stolen store machine:
// with its edge's own leaf credentials it pushes changes an edge may not
// make. The hub applies none of them, quarantines each with its reason,
// lists them as conflicts, counts them in /metrics, and still applies the
// honest records of the same push.
func TestForgedChangesOverTheLeafLinkAreRefused(t *testing.T) {
	e := MustStartPair(t)
	hub := hubState{e: e, tok: e.hubTok}
	cashierTok := e.hub.Login(t, "cashier@demo.test", demo.Password)
	cashier := hubState{e: e, tok: cashierTok}.get(t, "/api/v1/auth/me")
	kitchen := hubState{e: e, tok: e.hub.Login(t, "kitchen@demo.test", demo.Password)}.get(t, "/api/v1/auth/me")
	cashierID, kitchenID := cashier["id"].(string), kitchen["id"].(string)

	var other oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/locations", e.hubTok, map[string]any{"name": "Second store", "timezone": "Australia/Sydney", "currency": "AUD"}, &other); st != 201 {
		t.Fatalf("second location: %d %v", st, other)
	}
	otherLoc := other.Data["id"].(string)
	products := e.products(t, e.hub, e.hubTok)
	product := products[0]["id"].(string)
	price := int64(products[0]["base_price"].(float64))

	levels := hub.list(t, "/api/v1/inventory/stock?location_id="+e.location+"&limit=1")
	if len(levels) == 0 {
		t.Fatal("the demo location has no stock levels")
	}
	level := levels[0]["id"].(string)
	f := e.mustForge(t, e.location)
	orderID, lineID := newID(), newID()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	honestOrder := func(paid int64) map[string]any {
		return map[string]any{"id": orderID, "org_id": f.id.Org, "location_id": e.location, "number": "FORGE-00001", "status": "open",
			"channel": "pos", "customer_id": nil, "currency": "AUD", "subtotal": 1, "discount_total": 0, "tax_total": 0, "total": 1,
			"paid_total": paid, "refunded_total": 0, "loyalty_points_earned": 0, "kitchen_status": "new", "notes": "",
			"tax_inclusive": true, "tax_rate_bps": 0, "created_by": cashierID, "occurred_at": now, "created_at": now, "updated_at": now}
	}
	cases := []struct {
		name   string
		change change.Change
		reason string
	}{
		{"promote the cashier to owner", f.change("user", cashierID, change.OpUpdate, "", cashierID,
			map[string]any{"role": "owner", "updated_at": now}), "refused_actor"},
		{"a new owner account", f.change("user", newID(), change.OpInsert, "", cashierID,
			map[string]any{"email": "evil@demo.test", "name": "Evil", "role": "owner", "password_hash": "x", "is_active": true,
				"created_at": now, "updated_at": now}), "refused_actor"},
		{"org settings", f.change("org", f.id.Org, change.OpUpdate, "", cashierID,
			map[string]any{"settings": `{"refund_limit":999999999}`, "updated_at": now}), "refused_entity"},
		{"stock of another store, location left empty", f.change("stock_movement", newID(), change.OpInsert, "", cashierID,
			map[string]any{"location_id": otherLoc, "product_id": product, "delta": -500, "reason": "theft", "ref_type": "adjustment",
				"actor": cashierID, "note": "", "created_at": now, "updated_at": now}), "refused_scope"},
		{"stock of another store, the change naming ours", f.change("stock_movement", newID(), change.OpInsert, e.location, cashierID,
			map[string]any{"location_id": otherLoc, "product_id": product, "delta": -500, "reason": "theft", "ref_type": "adjustment",
				"actor": cashierID, "note": "", "created_at": now, "updated_at": now}), "refused_scope"},
		{"a cashier adjusting stock", f.change("stock_movement", newID(), change.OpInsert, e.location, cashierID,
			map[string]any{"location_id": e.location, "product_id": product, "delta": 50, "reason": "received", "ref_type": "adjustment",
				"actor": cashierID, "note": "", "created_at": now, "updated_at": now}), "refused_actor"},
		{"the kitchen repricing a product", f.change("product", product, change.OpUpdate, "", kitchenID,
			map[string]any{"base_price": 1, "updated_at": now}), "refused_actor"},
		{"an actor who is nobody", f.change("customer", newID(), change.OpInsert, "", newID(),
			map[string]any{"first_name": "A", "last_name": "B", "created_at": now, "updated_at": now}), "refused_actor"},
		{"a product the API would refuse", f.change("product", newID(), change.OpInsert, "", e.hubOwnerID(t),
			map[string]any{"name": "", "sku": "X-1", "base_price": -5, "created_at": now, "updated_at": now}), "refused_value"},
		{"the kitchen cancelling an order", f.change("order", orderID, change.OpUpdate, e.location, kitchenID,
			map[string]any{"status": "cancelled", "updated_at": now}), "refused_actor"},
		{"a cashier changing a reorder point", f.change("stock_level", level, change.OpUpdate, e.location, cashierID,
			map[string]any{"reorder_point": 99, "updated_at": now}), "refused_actor"},
		{"a line whose total does not follow", f.change("order_line", newID(), change.OpInsert, e.location, cashierID,
			map[string]any{"order_id": orderID, "position": 1, "product_id": product, "name": "x", "sku": "x", "quantity": 1,
				"unit_price": price, "modifiers": []any{}, "discount": 0, "tax": 0, "total": 1, "created_at": now, "updated_at": now}), "refused_value"},
	}
	var forged []change.Change
	// An honest sale rides along: an order with a forged paid_total and
	// subtotal, and its line; the hub keeps the order, recomputing both.
	honest := []change.Change{
		f.change("order", orderID, change.OpInsert, e.location, cashierID, honestOrder(999999)),
		f.change("order_line", lineID, change.OpInsert, e.location, cashierID, map[string]any{"order_id": orderID, "position": 0,
			"product_id": product, "name": "x", "sku": "x", "quantity": 1, "unit_price": price, "modifiers": []any{}, "discount": 0,
			"tax": 0, "total": price, "created_at": now, "updated_at": now}),
	}
	forged = append(forged, honest...)
	for _, c := range cases {
		forged = append(forged, c.change)
	}
	rep := f.push(t, forged...)
	if rep.Error != "" {
		t.Fatalf("the push failed as a whole (%s); refused records must be quarantined, the rest applied", rep.Error)
	}

	conflicts := hub.list(t, "/api/v1/sync/conflicts?limit=200")
	byEntity := map[string]map[string]any{}
	for _, c := range conflicts {
		if c["kind"] == "quarantined" {
			byEntity[c["entity_id"].(string)+"/"+c["remote"].(map[string]any)["id"].(string)] = c
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, ok := byEntity[c.change.EntityID+"/"+c.change.ID]
			if !ok {
				t.Fatalf("change not listed as quarantined; conflicts: %v", conflicts)
			}
			if got := q["local"].(map[string]any)["reason"]; got != c.reason {
				t.Errorf("reason = %v, want %s (error %v)", got, c.reason, q["local"].(map[string]any)["error"])
			}
		})
	}

	// Nothing forged took effect.
	if me := (hubState{e: e, tok: cashierTok}).get(t, "/api/v1/auth/me"); me["role"] != "cashier" {
		t.Errorf("the cashier's role at the hub is %v", me["role"])
	}
	var out map[string]any
	if st := e.hub.Call(t, "POST", "/api/v1/auth/login", "", map[string]string{"email": "evil@demo.test", "password": "x"}, &out); st != 401 {
		t.Errorf("the forged owner account logs in: %d", st)
	}
	for _, l := range hub.list(t, "/api/v1/inventory/stock?location_id="+otherLoc+"&limit=200") {
		if l["on_hand"].(float64) != 0 {
			t.Errorf("the other store's stock moved: %v", l)
		}
	}
	if p := hub.get(t, "/api/v1/catalog/products/"+product); int64(p["base_price"].(float64)) != price {
		t.Errorf("the product was repriced to %v", p["base_price"])
	}
	// The honest order arrived, with its derived figures recomputed.
	o := hub.get(t, "/api/v1/orders/"+orderID)
	if o["paid_total"].(float64) != 0 || int64(o["subtotal"].(float64)) != price || int64(o["total"].(float64)) != price {
		t.Errorf("order at the hub: paid_total %v subtotal %v total %v, want 0, %d, %d", o["paid_total"], o["subtotal"], o["total"], price, price)
	}
	// Ops see the refusals counted.
	m := metricsText(t, e.hub.URL)
	for _, reason := range []string{"refused_entity", "refused_scope", "refused_actor", "refused_value"} {
		if !strings.Contains(m, `kassa_sync_refused_total{reason="`+reason+`"}`) || strings.Contains(m, `kassa_sync_refused_total{reason="`+reason+`"} 0`+"\n") {
			t.Errorf("/metrics does not count %s refusals", reason)
		}
	}
	// The link does not stall: a later honest push still applies, and a
	// record that builds on a quarantined one is refused, not retried forever.
	rep = f.push(t, f.change("order_history", newID(), change.OpInsert, e.location, cashierID,
		map[string]any{"order_id": orderID, "status": "cancelled", "at": now, "actor": cashierID, "created_at": now, "updated_at": now}))
	if rep.Error != "" || rep.Applied != 1 {
		t.Errorf("a later honest record: %+v", rep)
	}
}

// hubOwnerID is the demo owner's user id.
func (e *env) hubOwnerID(t *testing.T) string {
	return hubState{e: e, tok: e.hubTok}.get(t, "/api/v1/auth/me")["id"].(string)
}

// TestAnEnrolledEdgeRefusesHubOnlyWrites: what the hub would refuse from an
// edge (locations, the org's settings) is refused at the enrolled edge at
// once, with a problem that says where to make the change.
func TestAnEnrolledEdgeRefusesHubOnlyWrites(t *testing.T) {
	e := MustStartPair(t)
	owner := e.edge.Login(t, "owner@demo.test", demo.Password)
	var p map[string]any
	if st := e.edge.Call(t, "POST", "/api/v1/locations", owner, map[string]any{"name": "Pop-up", "timezone": "UTC", "currency": "AUD"}, &p); st != 409 {
		t.Fatalf("a location created at the edge: %d %v, want 409", st, p)
	}
	if d, _ := p["detail"].(string); !strings.Contains(d, "hub") {
		t.Errorf("detail %q does not say where to make the change", d)
	}
	var locs listResp
	e.edge.Call(t, "GET", "/api/v1/locations", owner, nil, &locs)
	if len(locs.Data) != 1 {
		t.Errorf("the edge has %d locations, want its own only", len(locs.Data))
	}
}
