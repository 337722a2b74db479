package synctest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/webhooktest"
	"kassa.dev/sync/wait"
)

// evRun is one node's run of the event scenario: the node, a staff token
// there, its store and the ids the steps made.
type evRun struct {
	t         *testing.T
	p         *nodetest.Proc
	tok, dir  string
	origin    string
	org, loc  string
	ids       map[string]string
	seen      int // events of origin already checked
	seenTypes []string
}

// call makes a request that must answer want and returns its data.
func (r *evRun) call(method, path string, body any, want int) map[string]any {
	r.t.Helper()
	var out oneResp
	if st := r.p.Call(r.t, method, path, r.tok, body, &out); st != want {
		r.t.Fatalf("%s %s: %d, want %d: %v", method, path, st, want, out)
	}
	return out.Data
}

// get reads a resource (GET, 200) as JSON.
func (r *evRun) get(path string) map[string]any { return r.call("GET", path, nil, 200) }

// last reads the last element of a list.
func (r *evRun) last(path string) map[string]any {
	r.t.Helper()
	var l listResp
	if st := r.p.Call(r.t, "GET", path, r.tok, nil, &l); st != 200 || len(l.Data) == 0 {
		r.t.Fatalf("GET %s: %d, %d items", path, st, len(l.Data))
	}
	return l.Data[len(l.Data)-1]
}

// evWant is an event a step must log: its type, whether it is org-wide
// (no location), and the REST read its data must equal.
type evWant struct {
	typ     string
	orgWide bool
	read    func(r *evRun) map[string]any
}

type evStep struct {
	name    string
	hubOnly bool
	do      func(r *evRun)
	want    []evWant
}

func (r *evRun) layby() map[string]any { return r.get("/api/v1/laybys/" + r.ids["layby"]) }
func (r *evRun) order() map[string]any { return r.get("/api/v1/orders/" + r.ids["order"]) }

// openLayby opens a lay-by of one of the run's product for its customer
// with a cash deposit.
func (r *evRun) openLayby(deposit int64) {
	r.ids["layby"] = r.call("POST", "/api/v1/laybys", map[string]any{"location_id": r.loc, "customer_id": r.ids["customer"],
		"line_items": []any{map[string]any{"product_id": r.ids["product"], "quantity": 1}},
		"deposit":    map[string]any{"method": "cash", "amount": deposit}}, 201)["id"].(string)
}
func (r *evRun) payment() map[string]any { return r.get("/api/v1/payments/" + r.ids["payment"]) }
func (r *evRun) level() map[string]any {
	return r.last("/api/v1/inventory/stock?location_id=" + r.loc + "&product_id=" + r.ids["product"])
}

// giftCard reads the run's gift card as events carry it: the code masked
// but for its last 4 characters (kassa.GiftCard.MaskCode; the run's staff
// may take payments, so the REST read shows it whole).
func (r *evRun) giftCard() map[string]any {
	g := r.get("/api/v1/gift-cards/" + r.ids["gift"])
	code := g["code"].(string)
	g["code"] = strings.Repeat("•", len(code)-4) + code[len(code)-4:]
	return g
}
func (r *evRun) points() map[string]any {
	return r.last("/api/v1/loyalty/accounts/" + r.ids["account"] + "/transactions?limit=200")
}

var (
	wantLayby    = func(typ string) evWant { return evWant{typ: typ, read: (*evRun).layby} }
	wantOrder    = func(typ string) evWant { return evWant{typ: typ, read: (*evRun).order} }
	wantPayment  = func(typ string) evWant { return evWant{typ: typ, read: (*evRun).payment} }
	wantLevel    = func(typ string) evWant { return evWant{typ: typ, read: (*evRun).level} }
	wantEarned   = evWant{typ: kassa.EventLoyaltyPointsEarned, orgWide: true, read: (*evRun).points}
	wantCustomer = func(typ string) evWant {
		return evWant{typ: typ, orgWide: true, read: func(r *evRun) map[string]any { return r.get("/api/v1/customers/" + r.ids["customer"]) }}
	}
	wantProduct = func(typ, key string) evWant {
		return evWant{typ: typ, orgWide: true, read: func(r *evRun) map[string]any { return r.get("/api/v1/catalog/products/" + r.ids[key]) }}
	}
	wantCampaign = func(typ string) []evWant {
		return []evWant{{typ: typ, orgWide: true, read: func(r *evRun) map[string]any { return r.get("/api/v1/campaigns/" + r.ids["campaign"]) }}}
	}
	patchCampaign = func(body map[string]any) func(r *evRun) {
		return func(r *evRun) { r.call("PATCH", "/api/v1/campaigns/"+r.ids["campaign"], body, 200) }
	}
)

// eventSteps is the scenario: each operation that emits an event, and
// operations that must not (a no-op PATCH, refusals, stock moving up).
var eventSteps = []evStep{
	{name: "create a customer", do: func(r *evRun) {
		r.ids["customer"] = r.call("POST", "/api/v1/customers", map[string]any{"first_name": "Eve", "email": r.origin + "@events.test"}, 201)["id"].(string)
	}, want: []evWant{wantCustomer(kassa.EventCustomerCreated)}},
	{name: "change the customer", do: func(r *evRun) {
		r.call("PATCH", "/api/v1/customers/"+r.ids["customer"], map[string]any{"notes": "regular"}, 200)
	}, want: []evWant{wantCustomer(kassa.EventCustomerUpdated)}},
	{name: "a PATCH that changes nothing", do: func(r *evRun) {
		r.call("PATCH", "/api/v1/customers/"+r.ids["customer"], map[string]any{"notes": "regular", "first_name": "Eve"}, 200)
	}},
	{name: "a refused PATCH", do: func(r *evRun) {
		r.call("PATCH", "/api/v1/customers/"+r.ids["customer"], map[string]any{"email": "not an e-mail"}, 422)
	}},
	{name: "enrol", do: func(r *evRun) {
		r.ids["account"] = r.call("POST", "/api/v1/loyalty/accounts", map[string]any{"customer_id": r.ids["customer"]}, 201)["id"].(string)
	}},
	{name: "earn points", do: func(r *evRun) {
		r.call("POST", "/api/v1/loyalty/accounts/"+r.ids["account"]+"/earn", map[string]any{"points": 50, "reason": "welcome"}, 201)
	}, want: []evWant{wantEarned}},
	{name: "earn across a tier", do: func(r *evRun) {
		r.call("POST", "/api/v1/loyalty/accounts/"+r.ids["account"]+"/earn", map[string]any{"points": 60}, 201)
	}, want: []evWant{wantEarned, {typ: kassa.EventLoyaltyTierChanged, orgWide: true,
		read: func(r *evRun) map[string]any { return r.get("/api/v1/loyalty/accounts/" + r.ids["account"]) }}}},
	{name: "redeem", do: func(r *evRun) {
		r.call("POST", "/api/v1/loyalty/accounts/"+r.ids["account"]+"/redeem", map[string]any{"points": 10}, 201)
	}},
	{name: "count the stock up above the reorder point", do: func(r *evRun) {
		r.call("POST", "/api/v1/inventory/stock/adjust", map[string]any{"location_id": r.loc, "product_id": r.ids["product"],
			"reason": "count", "quantity": 3, "reorder_point": 2}, 200)
	}},
	{name: "create an order", do: func(r *evRun) {
		o := r.call("POST", "/api/v1/orders", map[string]any{"location_id": r.loc, "customer_id": r.ids["customer"],
			"line_items": []any{map[string]any{"product_id": r.ids["product"], "quantity": 1}}}, 201)
		r.ids["order"], r.ids["total"] = o["id"].(string), fmt.Sprint(o["total"])
	}, want: []evWant{wantOrder(kassa.EventOrderCreated)}},
	{name: "a refused completion of an unpaid order", do: func(r *evRun) {
		r.call("POST", "/api/v1/orders/"+r.ids["order"]+"/complete", nil, 409)
	}},
	{name: "a declined card", do: func(r *evRun) {
		r.ids["payment"] = r.call("POST", "/api/v1/payments/initiate", map[string]any{"order_id": r.ids["order"], "amount": 100,
			"method": "card", "card_number": "4000000000000001"}, 201)["id"].(string)
	}, want: []evWant{wantPayment(kassa.EventPaymentFailed)}},
	{name: "authorize a card", do: func(r *evRun) {
		r.ids["payment"] = r.call("POST", "/api/v1/payments/initiate", map[string]any{"order_id": r.ids["order"], "amount": 100,
			"method": "card", "card_number": "4242424242424242", "capture": false}, 201)["id"].(string)
	}},
	{name: "capture it", do: func(r *evRun) {
		r.call("POST", "/api/v1/payments/"+r.ids["payment"]+"/capture", nil, 200)
	}, want: []evWant{wantPayment(kassa.EventPaymentCaptured)}},
	{name: "pay the rest in cash, captured at once", do: func(r *evRun) {
		var total int
		fmt.Sscan(r.ids["total"], &total)
		r.ids["payment"] = r.call("POST", "/api/v1/payments/initiate", map[string]any{"order_id": r.ids["order"], "amount": total - 100,
			"method": "cash"}, 201)["id"].(string)
	}, want: []evWant{wantPayment(kassa.EventPaymentCaptured)}},
	{name: "complete: stock falls to the reorder point, points accrue", do: func(r *evRun) {
		r.call("POST", "/api/v1/orders/"+r.ids["order"]+"/complete", nil, 200)
	}, want: []evWant{wantLevel(kassa.EventInventoryLowStock), wantEarned, wantOrder(kassa.EventOrderCompleted)}},
	{name: "a partial refund", do: func(r *evRun) {
		r.call("POST", "/api/v1/orders/"+r.ids["order"]+"/refund", map[string]any{"amount": 50, "reason": "cold"}, 200)
	}, want: []evWant{wantOrder(kassa.EventOrderRefunded)}},
	{name: "a refund beyond what was paid", do: func(r *evRun) {
		r.call("POST", "/api/v1/orders/"+r.ids["order"]+"/refund", map[string]any{"amount": 1_000_000, "reason": "x"}, 422)
	}},
	{name: "the full refund, restocked (stock moves up: no event)", do: func(r *evRun) {
		r.call("POST", "/api/v1/orders/"+r.ids["order"]+"/refund", map[string]any{"reason": "returned", "restock": true}, 200)
	}, want: []evWant{wantOrder(kassa.EventOrderRefunded)}},
	{name: "stock falls from above the reorder point to zero", do: func(r *evRun) {
		r.call("POST", "/api/v1/inventory/stock/adjust", map[string]any{"location_id": r.loc, "product_id": r.ids["product"],
			"reason": "damaged", "quantity": 3}, 200)
	}, want: []evWant{wantLevel(kassa.EventInventoryLowStock), wantLevel(kassa.EventInventoryStockout)}},
	{name: "stock received, still at or below the reorder point", do: func(r *evRun) {
		r.call("POST", "/api/v1/inventory/stock/adjust", map[string]any{"location_id": r.loc, "product_id": r.ids["product"],
			"reason": "received", "quantity": 1}, 200)
	}},
	{name: "a second stockout, without a second low stock", do: func(r *evRun) {
		r.call("POST", "/api/v1/inventory/stock/adjust", map[string]any{"location_id": r.loc, "product_id": r.ids["product"],
			"reason": "wastage", "quantity": 1}, 200)
	}, want: []evWant{wantLevel(kassa.EventInventoryStockout)}},
	{name: "an invalid order", do: func(r *evRun) {
		r.call("POST", "/api/v1/orders", map[string]any{"location_id": r.loc, "line_items": []any{}}, 422)
	}},
	{name: "receive a transfer", do: func(r *evRun) {
		r.call("POST", "/api/v1/inventory/transfers/"+r.ids["transfer"]+"/receive", nil, 200)
	}, want: []evWant{{typ: kassa.EventInventoryTransferDone,
		read: func(r *evRun) map[string]any { return r.get("/api/v1/inventory/transfers/" + r.ids["transfer"]) }}}},
	{name: "rename the product", do: func(r *evRun) {
		r.call("PATCH", "/api/v1/catalog/products/"+r.ids["product"], map[string]any{"name": "Renamed " + r.origin}, 200)
	}, want: []evWant{wantProduct(kassa.EventProductUpdated, "product")}},
	{name: "sell a gift card", do: func(r *evRun) {
		g := r.call("POST", "/api/v1/gift-cards", map[string]any{"initial_amount": 5000}, 201)
		r.ids["gift"], r.ids["gift_code"] = g["id"].(string), g["code"].(string)
	}, want: []evWant{{typ: kassa.EventGiftCardIssued, orgWide: true, read: (*evRun).giftCard}}},
	{name: "an order to pay by gift card", do: func(r *evRun) {
		o := r.call("POST", "/api/v1/orders", map[string]any{"location_id": r.loc,
			"line_items": []any{map[string]any{"product_id": r.ids["product"], "quantity": 1}}}, 201)
		r.ids["order"], r.ids["total"] = o["id"].(string), fmt.Sprint(o["total"])
	}, want: []evWant{wantOrder(kassa.EventOrderCreated)}},
	{name: "a refused gift card payment: no card has the code", do: func(r *evRun) {
		r.call("POST", "/api/v1/payments/initiate", map[string]any{"order_id": r.ids["order"], "amount": 100,
			"method": "gift_card", "gift_card_code": "2345678923456789"}, 422)
	}},
	{name: "pay it by gift card", do: func(r *evRun) {
		var total int
		fmt.Sscan(r.ids["total"], &total)
		r.ids["payment"] = r.call("POST", "/api/v1/payments/initiate", map[string]any{"order_id": r.ids["order"], "amount": total,
			"method": "gift_card", "gift_card_code": r.ids["gift_code"]}, 201)["id"].(string)
	}, want: []evWant{{typ: kassa.EventGiftCardRedeemed, read: (*evRun).giftCard}, wantPayment(kassa.EventPaymentCaptured)}},
	{name: "open a lay-by", do: func(r *evRun) { r.openLayby(400) }, want: []evWant{wantLayby(kassa.EventLaybyCreated)}},
	{name: "a refused deposit below the minimum", do: func(r *evRun) {
		r.call("POST", "/api/v1/laybys", map[string]any{"location_id": r.loc, "customer_id": r.ids["customer"],
			"line_items": []any{map[string]any{"product_id": r.ids["product"], "quantity": 1}}, "deposit": map[string]any{"method": "cash", "amount": 1}}, 422)
	}},
	{name: "the customer cancels it", do: func(r *evRun) {
		r.call("POST", "/api/v1/laybys/"+r.ids["layby"]+"/cancel", map[string]any{"by": "customer"}, 200)
	}, want: []evWant{wantLayby(kassa.EventLaybyCancelled)}},
	{name: "open another", do: func(r *evRun) { r.openLayby(400) }, want: []evWant{wantLayby(kassa.EventLaybyCreated)}},
	{name: "an instalment", do: func(r *evRun) {
		r.call("POST", "/api/v1/laybys/"+r.ids["layby"]+"/payments", map[string]any{"method": "cash", "amount": 100}, 200)
	}, want: []evWant{wantLayby(kassa.EventLaybyPaymentReceived)}},
	{name: "a refused instalment over the balance", do: func(r *evRun) {
		r.call("POST", "/api/v1/laybys/"+r.ids["layby"]+"/payments", map[string]any{"method": "cash", "amount": 1_000_000}, 422)
	}},
	{name: "the instalment that pays it in full", do: func(r *evRun) {
		l := r.get("/api/v1/laybys/" + r.ids["layby"])
		r.call("POST", "/api/v1/laybys/"+r.ids["layby"]+"/payments", map[string]any{"method": "cash", "amount": l["balance"]}, 200)
	}, want: []evWant{wantLayby(kassa.EventLaybyPaymentReceived), wantLayby(kassa.EventLaybyCompleted)}},
	{name: "create a product", hubOnly: true, do: func(r *evRun) {
		r.ids["new"] = r.call("POST", "/api/v1/catalog/products", map[string]any{"name": "Scone", "sku": "EV-SCONE", "base_price": 450}, 201)["id"].(string)
	}, want: []evWant{wantProduct(kassa.EventProductCreated, "new")}},
	{name: "archive it", hubOnly: true, do: func(r *evRun) {
		r.call("DELETE", "/api/v1/catalog/products/"+r.ids["new"], nil, 200)
	}, want: []evWant{wantProduct(kassa.EventProductUpdated, "new")}},
	{name: "run an automation that emits", hubOnly: true, do: func(r *evRun) {
		r.ids["rule"] = r.call("POST", "/api/v1/automations", map[string]any{"name": "Emit", "trigger": map[string]any{"type": "manual"},
			"actions": []any{map[string]any{"type": "emit_event", "params": map[string]any{"payload": map[string]any{"step": "catalog"}}}}}, 201)["id"].(string)
		var l listResp
		if st := r.p.Call(r.t, "POST", "/api/v1/automations/trigger", r.tok, map[string]any{"event": kassa.EventOrderCreated, "rule_id": r.ids["rule"]}, &l); st != 200 || len(l.Data) != 1 {
			r.t.Fatalf("trigger: %d %v", st, l.Data)
		}
	}, want: []evWant{{typ: kassa.EventAutomationTriggered, orgWide: true, read: func(r *evRun) map[string]any {
		x := r.last("/api/v1/automations/" + r.ids["rule"] + "/executions")
		x["payload"] = map[string]any{"step": "catalog"}
		return x
	}}}},
	{name: "create a campaign", hubOnly: true, do: func(r *evRun) {
		r.ids["campaign"] = r.call("POST", "/api/v1/campaigns", map[string]any{"name": "Event voucher", "type": "offer", "voucher_code": "EVENTS",
			"rules": []any{map[string]any{"type": "order_discount", "discount_type": "percent", "value": 500}}}, 201)["id"].(string)
	}, want: wantCampaign(kassa.EventCampaignCreated)},
	{name: "a campaign PATCH that changes nothing", hubOnly: true, do: patchCampaign(map[string]any{"name": "Event voucher"})},
	{name: "rename the campaign", hubOnly: true, do: patchCampaign(map[string]any{"name": "Event voucher 2"}), want: wantCampaign(kassa.EventCampaignUpdated)},
	{name: "launch it", hubOnly: true, do: func(r *evRun) {
		r.call("POST", "/api/v1/campaigns/"+r.ids["campaign"]+"/launch", nil, 200)
	}, want: wantCampaign(kassa.EventCampaignLaunched)},
	{name: "a refused second launch", hubOnly: true, do: func(r *evRun) {
		r.call("POST", "/api/v1/campaigns/"+r.ids["campaign"]+"/launch", nil, 409)
	}},
	{name: "pause it", hubOnly: true, do: patchCampaign(map[string]any{"status": "paused"}), want: wantCampaign(kassa.EventCampaignPaused)},
	{name: "resume it", hubOnly: true, do: patchCampaign(map[string]any{"status": "active"}), want: wantCampaign(kassa.EventCampaignUpdated)},
	{name: "end it", hubOnly: true, do: patchCampaign(map[string]any{"status": "ended"}), want: wantCampaign(kassa.EventCampaignEnded)},
}

// ownEvents reads the events of the node's log that happened there.
func (r *evRun) ownEvents() []node.LoggedEvent { return eventsAt(eventLog(r.t, r.dir), r.origin) }

// run plays the scenario at r's node: after each step the node's log has
// exactly the step's events, in order, each with the org, the location
// (none for an org-wide event), occurred_at the resource's own time and
// data equal to the REST read of the resource.
func (r *evRun) run(hub bool) {
	r.seen = len(r.ownEvents())
	for _, s := range eventSteps {
		if s.hubOnly && !hub {
			continue
		}
		s.do(r)
		es := r.ownEvents()[r.seen:]
		r.seen += len(es)
		var got, want []string
		for _, e := range es {
			got = append(got, e.Type)
		}
		for _, w := range s.want {
			want = append(want, w.typ)
		}
		if !slices.Equal(got, want) {
			r.t.Fatalf("%s: logged %v, want %v", s.name, got, want)
		}
		for i, w := range s.want {
			e := es[i]
			var data map[string]any
			if err := json.Unmarshal(e.Data.(json.RawMessage), &data); err != nil {
				r.t.Fatal(err)
			}
			loc := r.loc
			if w.orgWide {
				loc = ""
			}
			if read := w.read(r); !reflect.DeepEqual(data, read) {
				r.t.Fatalf("%s: %s data\n%v\nREST reads\n%v", s.name, e.Type, data, read)
			}
			at, _ := data["updated_at"].(string)
			if at == "" {
				at, _ = data["created_at"].(string)
			}
			if e.OrgID != r.org || e.LocationID != loc || at == "" || e.OccurredAt.Format(time.RFC3339Nano) != at {
				r.t.Fatalf("%s: %s org %s location %q occurred_at %s, want org %s location %q at %s", s.name, e.Type,
					e.OrgID, e.LocationID, e.OccurredAt.Format(time.RFC3339Nano), r.org, loc, at)
			}
			r.seenTypes = append(r.seenTypes, e.Type)
		}
	}
}

// TestEveryEventComesFromItsOperationAtEitherNode plays every operation
// that emits an event at the hub, and at an edge cut off from it: each
// logs its events, and only those, with the resource's REST shape as
// data; refused operations log nothing. The edge's events reach the hub
// once after reconnect, keeping their occurred_at and data, and stay once
// after the link is cut and restored again.
func TestEveryEventComesFromItsOperationAtEitherNode(t *testing.T) {
	e := MustStartPair(t)
	hubRun := &evRun{t: t, p: e.hub, tok: e.hubTok, dir: e.hubStore, origin: edgeOrigin(t, e.hubStore), ids: map[string]string{}}
	edgeRun := &evRun{t: t, p: e.edge, tok: e.edgeMgr, dir: e.edgeDir, origin: edgeOrigin(t, e.edgeDir), loc: e.location, ids: map[string]string{}}
	hubRun.org = hubRun.get("/api/v1/locations/" + e.location)["org_id"].(string)
	edgeRun.org = hubRun.org

	// At the hub: a loyalty program with tiers; a location without an edge
	// for the hub's run (the hub forwards money operations on an edge's
	// orders to that edge), a depot, and per run a product and a transfer
	// of it from the depot to the run's location.
	hubRun.call("PUT", "/api/v1/payments/methods", map[string]any{"methods": []any{map[string]any{"method": "gift_card", "enabled": true}}}, 200)
	// The edge's run pays by gift card while cut off: within the org's allowance.
	hubRun.call("PATCH", "/api/v1/settings", map[string]any{"gift_card_offline_limit": 100000}, 200)
	hubRun.call("POST", "/api/v1/loyalty/programs", map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 1,
		"tiers": []any{map[string]any{"name": "Member", "min_lifetime_points": 0}, map[string]any{"name": "Silver", "min_lifetime_points": 100}}}, 201)
	hubRun.loc = hubRun.call("POST", "/api/v1/locations", map[string]any{"name": "Head office shop", "timezone": "Australia/Sydney"}, 201)["id"].(string)
	depot := hubRun.call("POST", "/api/v1/locations", map[string]any{"name": "Depot", "timezone": "Australia/Sydney"}, 201)["id"].(string)
	for i, r := range []*evRun{hubRun, edgeRun} {
		r.ids["product"] = hubRun.call("POST", "/api/v1/catalog/products", map[string]any{"name": "Event beans", "sku": fmt.Sprintf("EV-%d", i), "base_price": 1000}, 201)["id"].(string)
		hubRun.call("POST", "/api/v1/inventory/stock/adjust", map[string]any{"location_id": depot, "product_id": r.ids["product"], "reason": "count", "quantity": 5}, 200)
		r.ids["transfer"] = hubRun.call("POST", "/api/v1/inventory/transfers", map[string]any{"from_location_id": depot, "to_location_id": r.loc,
			"lines": []any{map[string]any{"product_id": r.ids["product"], "quantity": 2}}}, 201)["id"].(string)
	}
	wait.For(t, 20*time.Second, "gift cards, the allowance, the program, product and transfer at the edge", func() bool {
		var l listResp
		var m oneResp
		var set oneResp
		return e.edge.Call(t, "GET", "/api/v1/payments/methods", e.edgeMgr, nil, &m) == 200 && strings.Contains(fmt.Sprint(m.Data),
			"map[enabled:true method:gift_card]") && e.edge.Call(t, "GET", "/api/v1/settings", e.edgeMgr, nil, &set) == 200 &&
			set.Data["gift_card_offline_limit"] == 100000.0 && e.edge.Call(t, "GET", "/api/v1/inventory/transfers/"+edgeRun.ids["transfer"], e.edgeMgr, nil, nil) == 200 &&
			e.edge.Call(t, "GET", "/api/v1/catalog/products/"+edgeRun.ids["product"], e.edgeMgr, nil, nil) == 200 &&
			e.edge.Call(t, "GET", "/api/v1/loyalty/programs", e.edgeMgr, nil, &l) == 200 && len(l.Data) == 1
	})

	// A partner subscribed to everything: every event the hub logs from
	// here on, its own and the edge's, must reach it once.
	hooked := len(eventLog(t, e.hubStore))
	hook := webhooktest.New(t)
	registerHook(t, e.hub, e.hubTok, hook, kassa.WebhookAllEvents)

	t.Run("hub", func(t *testing.T) { hubRun.t = t; hubRun.run(true) })

	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	t.Run("edge offline", func(t *testing.T) { edgeRun.t = t; edgeRun.run(false) })
	edgeRun.t = t
	e.proxy.restore()

	for round := range 2 {
		wait.For(t, 30*time.Second, "the edge to verify after reconnect", func() bool {
			st := e.status(t, e.edge, e.edgeMgr)
			return st["connected"] == true && st["last_verified"] != nil && st["pending_up"] == float64(0)
		})
		wait.For(t, 20*time.Second, "the edge's events at the hub", func() bool {
			return len(eventsAt(eventLog(t, e.hubStore), edgeRun.origin)) == edgeRun.seen
		})
		hubLog, edgeLog := eventLog(t, e.hubStore), eventLog(t, e.edgeDir)
		if n := sameEvents(t, hubLog, edgeLog, edgeRun.origin); n != edgeRun.seen {
			t.Fatalf("round %d: the edge logged %d events, %d checked", round, n, edgeRun.seen)
		}
		if round == 0 {
			e.proxy.cut()
			wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
			e.proxy.restore()
		}
	}
	deliveredOnce(t, hook, eventLog(t, e.hubStore)[hooked:])
	// Every emitted type of the catalog came from an operation, at the hub.
	for _, c := range kassa.EventCatalog {
		if c.Emitted && c.Logged && !slices.Contains(hubRun.seenTypes, c.Type) {
			t.Errorf("%s is emitted (kassa.EventCatalog) but no step made it", c.Type)
		}
	}
}

// eventsAt keeps the events of a log that happened at origin.
func eventsAt(es []node.LoggedEvent, origin string) []node.LoggedEvent {
	var out []node.LoggedEvent
	for _, e := range es {
		if e.Origin == origin {
			out = append(out, e)
		}
	}
	return out
}

// deliveredOnce waits until the receiver holds one delivery per logged
// event, and checks that each type's deliveries carry exactly the logged
// events' data (each event once, however often its change was replayed),
// under delivery ids that never carried anything else.
func deliveredOnce(t *testing.T, r *webhooktest.Receiver, logged []node.LoggedEvent) {
	t.Helper()
	canon := func(v any) string {
		b, _ := json.Marshal(v)
		var m any
		json.Unmarshal(b, &m)
		b, _ = json.Marshal(m)
		return string(b)
	}
	want := map[string][]string{} // type → data of each event
	for _, e := range logged {
		want[e.Type] = append(want[e.Type], canon(e.Data))
	}
	got := func() map[string][]string {
		out, seen := map[string][]string{}, map[string]string{}
		for _, d := range r.All() {
			body := canon(d.Body["data"])
			if prev, ok := seen[d.Delivery]; ok {
				if prev != body {
					t.Fatalf("delivery %s carried two bodies", d.Delivery)
				}
				continue // a retry of the same delivery
			}
			seen[d.Delivery] = body
			out[d.Event] = append(out[d.Event], body)
		}
		return out
	}
	wait.For(t, 30*time.Second, fmt.Sprintf("%d deliveries of %d types", len(logged), len(want)), func() bool {
		n := 0
		for _, bodies := range got() {
			n += len(bodies)
		}
		return n >= len(logged)
	})
	have := got()
	t.Logf("%d events of %d types delivered once each", len(logged), len(want))
	for typ, bodies := range want {
		slices.Sort(bodies)
		slices.Sort(have[typ])
		if !slices.Equal(bodies, have[typ]) {
			t.Errorf("%s: %d logged, %d delivered, or their data differ", typ, len(bodies), len(have[typ]))
		}
	}
	for typ := range have {
		if want[typ] == nil {
			t.Errorf("%s delivered but never logged", typ)
		}
	}
}
