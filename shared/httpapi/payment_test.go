package httpapi_test

import (
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// The payment API through HTTP over a real store: cash with change, the
// card simulator's test cards, authorize and capture, void, disabled
// methods, store-and-forward card payments while the node has no uplink
// and their limits, list filters, settlements per local day, events and org
// isolation. The fixture is ordFixture of order_test.go.

// Simulator cards.
const (
	payApprove      = "4242424242424242"
	payDecline      = "4000000000000002"
	payInsufficient = "4000000000009995"
	payError        = "4000000000000119"
	payBadLuhn      = "4242424242424241"
)

// payInit posts a payment as the owner.
func (f *ordFixture) payInit(body map[string]any) *resp {
	f.t.Helper()
	return f.do("POST", "/payments/initiate", "", body)
}

// payPaid reads an order's paid_total.
func (f *ordFixture) payPaid(orderID string) int64 {
	f.t.Helper()
	return ordNum(f.get(orderID)["paid_total"])
}

// payList lists payments matching query.
func (f *ordFixture) payList(token, query string) []map[string]any {
	f.t.Helper()
	r := f.must(f.do("GET", "/payments"+query, token, nil), 200)
	var out []map[string]any
	for _, it := range r.List() {
		out = append(out, it.(map[string]any))
	}
	return out
}

// payIDs returns the ids of payments.
func payIDs(ps []map[string]any) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p["id"].(string))
	}
	return out
}

func TestPaymentCash(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Muffin", "MUF-1", 380)
	o := f.simpleOrder(f.locA, p, 2)
	id := o["id"].(string)

	r := f.must(f.payInit(map[string]any{"order_id": id, "amount": 500, "method": "cash", "tendered": 1000}), 201)
	pay := r.Data()
	ordWant(t, pay, map[string]any{"order_id": id, "location_id": f.locA, "amount": 500.0, "method": "cash", "status": "captured",
		"tendered": 1000.0, "change_due": 500.0, "offline": false, "refunded_amount": 0.0, "failure_reason": nil, "card_last4": nil})
	if ref, _ := pay["processor_ref"].(string); ref != "cash_"+pay["id"].(string) || pay["captured_at"] == nil {
		t.Fatalf("cash payment %v", pay)
	}
	t.Run("the Location header names the payment", func(t *testing.T) {
		loc := r.Header.Get("Location")
		if !strings.HasPrefix(loc, "/api/v1/") {
			t.Fatalf("Location %q", loc)
		}
		got := f.tn.Do("GET", loc, f.org.Owner, nil)
		if got.Status != 200 || got.Data()["id"] != pay["id"] {
			t.Errorf("GET %s (the Location of the new payment): %d %s", loc, got.Status, got.Body)
		}
	})
	if f.payPaid(id) != 500 {
		t.Fatal("paid_total")
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"above the amount due", map[string]any{"order_id": id, "amount": 261, "method": "cash"}, "amount"},
		{"tendered below the amount", map[string]any{"order_id": id, "amount": 260, "method": "cash", "tendered": 259}, "tendered"},
		{"tendered for a card", map[string]any{"order_id": id, "amount": 260, "method": "card", "card_number": payApprove, "tendered": 300}, "tendered"},
		{"cash authorized only", map[string]any{"order_id": id, "amount": 260, "method": "cash", "capture": false}, "capture"},
		{"a card without a number", map[string]any{"order_id": id, "amount": 260, "method": "card"}, "card_number"},
		{"zero", map[string]any{"order_id": id, "amount": 0, "method": "cash"}, "amount"},
		{"negative", map[string]any{"order_id": id, "amount": -1, "method": "cash"}, "amount"},
		{"an unknown method", map[string]any{"order_id": id, "amount": 1, "method": "cheque"}, "method"},
		{"no order", map[string]any{"amount": 1, "method": "cash"}, "order_id"},
		{"an unknown field", map[string]any{"order_id": id, "amount": 1, "method": "cash", "currency": "AUD"}, "currency"},
		{"amount as a string", map[string]any{"order_id": id, "amount": "1", "method": "cash"}, "amount"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			f.refused(t, f.payInit(tc.body), 422, "validation", tc.field, before)
			if f.payPaid(id) != 500 {
				t.Fatal("a refused payment moved paid_total")
			}
		})
	}
	for _, raw := range []string{"", "{", "[]", `{"order_id":"x"} 1`} {
		t.Run("malformed "+raw, func(t *testing.T) {
			before := f.tn.outboxLen()
			f.refused(t, f.do("POST", "/payments/initiate", "", raw), 400, "bad-request", "", before)
		})
	}
	t.Run("an unknown order", func(t *testing.T) {
		before := f.tn.outboxLen()
		f.refused(t, f.payInit(map[string]any{"order_id": ordNoSuchID, "amount": 1, "method": "cash"}), 404, "not-found", "", before)
	})
	t.Run("the rest without tendered", func(t *testing.T) {
		rest := f.must(f.payInit(map[string]any{"order_id": id, "amount": 260, "method": "cash"}), 201).Data()
		ordWant(t, rest, map[string]any{"status": "captured", "tendered": 260.0, "change_due": 0.0})
		if f.payPaid(id) != 760 {
			t.Fatal("paid_total")
		}
		before := f.tn.outboxLen()
		f.refused(t, f.payInit(map[string]any{"order_id": id, "amount": 1, "method": "cash"}), 422, "validation", "amount", before)
	})
	t.Run("a cashier takes payments", func(t *testing.T) {
		o := f.simpleOrder(f.locA, p, 1)
		r := f.do("POST", "/payments/initiate", f.cashier, map[string]any{"order_id": o["id"], "amount": 380, "method": "cash"})
		f.must(r, 201)
	})
}

func TestPaymentCardAuthorizeCaptureVoid(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Latte", "LAT-1", 450)
	o := f.simpleOrder(f.locA, p, 4) // 1800
	id := o["id"].(string)
	sub := ordEvents(t, f.tn, "payment.")

	first := f.must(f.payInit(map[string]any{"order_id": id, "amount": 500, "method": "card", "card_number": "4242 4242 4242 4242"}), 201).Data()
	ordWant(t, first, map[string]any{"status": "captured", "card_last4": "4242", "offline": false, "tendered": nil, "change_due": nil})
	if first["processor_ref"] != "sim_"+first["id"].(string) || first["captured_at"] == nil {
		t.Fatalf("card payment %v", first)
	}
	ordWant(t, ordNext(t, sub, kassa.EventPaymentCaptured), map[string]any{"id": first["id"], "status": "captured", "amount": 500.0})
	if f.payPaid(id) != 500 {
		t.Fatal("paid_total after a captured card")
	}

	auth := f.must(f.payCard(id, 700, payApprove, false), 201).Data()
	ordWant(t, auth, map[string]any{"status": "authorized", "captured_at": nil})
	ordNone(t, sub, "an authorization")
	if f.payPaid(id) != 500 {
		t.Fatal("an authorization moved paid_total")
	}
	t.Run("an authorization holds its part of the amount due", func(t *testing.T) {
		before := f.tn.outboxLen()
		f.refused(t, f.payCard(id, 601, payApprove, true), 422, "validation", "amount", before)
	})
	t.Run("capture", func(t *testing.T) {
		c := f.must(f.do("POST", "/payments/"+auth["id"].(string)+"/capture", "", nil), 200).Data()
		ordWant(t, c, map[string]any{"id": auth["id"], "status": "captured", "amount": 700.0})
		if c["captured_at"] == nil || f.payPaid(id) != 1200 {
			t.Fatalf("captured %v, paid %d", c, f.payPaid(id))
		}
		ordWant(t, ordNext(t, sub, kassa.EventPaymentCaptured), map[string]any{"id": auth["id"], "status": "captured"})
	})
	t.Run("capture twice", func(t *testing.T) {
		before := f.tn.outboxLen()
		f.refused(t, f.do("POST", "/payments/"+auth["id"].(string)+"/capture", "", nil), 409, "conflict", "", before)
		if f.payPaid(id) != 1200 {
			t.Fatal("a second capture moved paid_total")
		}
		ordNone(t, sub, "a refused capture")
	})
	t.Run("void an authorization", func(t *testing.T) {
		a2 := f.must(f.payCard(id, 600, payApprove, false), 201).Data()
		v := f.must(f.do("POST", "/payments/"+a2["id"].(string)+"/void", "", nil), 200).Data()
		ordWant(t, v, map[string]any{"status": "voided"})
		if f.payPaid(id) != 1200 {
			t.Fatal("voiding an authorization moved paid_total")
		}
		before := f.tn.outboxLen()
		f.refused(t, f.do("POST", "/payments/"+a2["id"].(string)+"/void", "", nil), 409, "conflict", "", before)
		f.refused(t, f.do("POST", "/payments/"+a2["id"].(string)+"/capture", "", nil), 409, "conflict", "", before)
	})
	t.Run("void a capture while the order is open", func(t *testing.T) {
		v := f.must(f.do("POST", "/payments/"+first["id"].(string)+"/void", f.cashier, nil), 200).Data()
		ordWant(t, v, map[string]any{"status": "voided"})
		if f.payPaid(id) != 700 {
			t.Fatalf("paid_total %d after voiding 500 of 1200", f.payPaid(id))
		}
	})
	t.Run("no void once the order is completed", func(t *testing.T) {
		rest := f.must(f.payCard(id, 1100, payApprove, true), 201).Data()
		ordNext(t, sub, kassa.EventPaymentCaptured)
		f.complete(id)
		before := f.tn.outboxLen()
		f.refused(t, f.do("POST", "/payments/"+rest["id"].(string)+"/void", "", nil), 409, "conflict", "", before)
		f.refused(t, f.do("POST", "/payments/"+auth["id"].(string)+"/void", "", nil), 409, "conflict", "", before)
		if f.payPaid(id) != 1800 {
			t.Fatal("paid_total moved")
		}
	})
	t.Run("a captured authorization pays for the order", func(t *testing.T) {
		o2 := f.simpleOrder(f.locA, p, 1)
		a := f.must(f.payCard(o2["id"].(string), 200, payApprove, false), 201).Data()
		ordNone(t, sub, "an authorization")
		f.payCash(o2["id"].(string), 250)
		ordNext(t, sub, kassa.EventPaymentCaptured)
		before := f.tn.outboxLen()
		f.refused(t, f.do("POST", "/orders/"+o2["id"].(string)+"/complete", "", nil), 409, "conflict", "", before)
		f.must(f.do("POST", "/payments/"+a["id"].(string)+"/capture", "", nil), 200)
		ordNext(t, sub, kassa.EventPaymentCaptured)
		if got := f.complete(o2["id"].(string)); got["paid_total"] != 450.0 {
			t.Fatalf("order %v", got)
		}
	})
	t.Run("unknown payments", func(t *testing.T) {
		for _, path := range []string{"/payments/" + ordNoSuchID + "/capture", "/payments/" + ordNoSuchID + "/void", "/payments/abc/void"} {
			mustProblem(t, f.do("POST", path, "", nil), 404, "not-found")
		}
	})
}

func TestPaymentCardFailures(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Latte", "LAT-1", 450)
	o := f.simpleOrder(f.locA, p, 2)
	id := o["id"].(string)
	sub := ordEvents(t, f.tn, "payment.")
	cases := []struct {
		name, card, reason, last4 string
	}{
		{"declined", payDecline, "card_declined", "0002"},
		{"insufficient funds", payInsufficient, "insufficient_funds", "9995"},
		{"an invalid number", payBadLuhn, "invalid_number", "4241"},
		{"a processing error", payError, "processing_error", "0119"},
	}
	for _, tc := range cases {
		for _, capture := range []bool{true, false} {
			name := tc.name
			if !capture {
				name += ", authorize only"
			}
			t.Run(name, func(t *testing.T) {
				r := f.must(f.payCard(id, 900, tc.card, capture), 201)
				pm := r.Data()
				ordWant(t, pm, map[string]any{"status": "failed", "failure_reason": tc.reason, "card_last4": tc.last4,
					"captured_at": nil, "amount": 900.0, "order_id": id})
				if f.payPaid(id) != 0 {
					t.Fatal("a failed payment moved paid_total")
				}
				ev := ordNext(t, sub, kassa.EventPaymentFailed)
				ordWant(t, ev, map[string]any{"id": pm["id"], "status": "failed", "failure_reason": tc.reason})
				before := f.tn.outboxLen()
				f.refused(t, f.do("POST", "/payments/"+pm["id"].(string)+"/capture", "", nil), 409, "conflict", "", before)
				f.refused(t, f.do("POST", "/payments/"+pm["id"].(string)+"/void", "", nil), 409, "conflict", "", before)
			})
		}
	}
	t.Run("a failed payment holds nothing of the amount due", func(t *testing.T) {
		pm := f.must(f.payCard(id, 900, payApprove, true), 201).Data()
		ordWant(t, pm, map[string]any{"status": "captured", "failure_reason": nil})
		ordWant(t, ordNext(t, sub, kassa.EventPaymentCaptured), map[string]any{"id": pm["id"]})
		ordNone(t, sub, "one capture")
		got := f.get(id)
		if got["paid_total"] != 900.0 || len(ordItems(got, "payments")) != 9 {
			t.Fatalf("order %v", got)
		}
	})
}

func TestPaymentMethodsMustBeEnabled(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Latte", "LAT-1", 450)
	id := f.simpleOrder(f.locA, p, 4)["id"].(string)
	refuse := func(t *testing.T, body map[string]any) {
		t.Helper()
		before := f.tn.outboxLen()
		f.refused(t, f.payInit(body), 422, "validation", "method", before)
	}
	t.Run("gift cards are off by default", func(t *testing.T) {
		refuse(t, map[string]any{"order_id": id, "amount": 100, "method": "gift_card", "gift_card_code": "2345-6789-ABCD-EFGH"})
	})
	t.Run("external is off by default", func(t *testing.T) {
		refuse(t, map[string]any{"order_id": id, "amount": 100, "method": "external"})
	})
	t.Run("a disabled card", func(t *testing.T) {
		f.must(f.do("PUT", "/payments/methods", "", map[string]any{"methods": []any{map[string]any{"method": "card", "enabled": false}}}), 200)
		refuse(t, map[string]any{"order_id": id, "amount": 100, "method": "card", "card_number": payApprove})
		f.payCash(id, 100)
	})
	t.Run("an enabled external method", func(t *testing.T) {
		f.must(f.do("PUT", "/payments/methods", "", map[string]any{"methods": []any{map[string]any{"method": "external", "enabled": true}}}), 200)
		pm := f.must(f.payInit(map[string]any{"order_id": id, "amount": 100, "method": "external"}), 201).Data()
		if pm["status"] != "captured" || pm["processor_ref"] != "ext_"+pm["id"].(string) {
			t.Fatalf("external payment %v", pm)
		}
	})
	t.Run("card enabled again", func(t *testing.T) {
		f.must(f.do("PUT", "/payments/methods", "", map[string]any{"methods": []any{map[string]any{"method": "card", "enabled": true}}}), 200)
		f.must(f.payCard(id, 100, payApprove, true), 201)
	})
	if f.payPaid(id) != 300 {
		t.Fatalf("paid_total %d", f.payPaid(id))
	}
}

func TestPaymentOfflineCards(t *testing.T) {
	var offline atomic.Bool
	offline.Store(true)
	f := newOrdFixture(t, func(c *node.Config) { c.Offline = offline.Load })
	big, huge := f.product("Espresso machine", "EM-1", 9000), f.product("Grinder", "GR-1", 12000)
	f.settings(map[string]any{"offline_card_daily_limit": 20000})
	o1 := f.simpleOrder(f.locA, big, 1)["id"].(string)
	o2 := f.simpleOrder(f.locA, huge, 1)["id"].(string)
	o3 := f.simpleOrder(f.locA, big, 1)["id"].(string)
	sub := ordEvents(t, f.tn, "payment.")

	failed := func(t *testing.T, r *resp, reason string) {
		t.Helper()
		pm := f.must(r, 201).Data()
		ordWant(t, pm, map[string]any{"status": "failed", "failure_reason": reason, "processor_ref": nil, "captured_at": nil})
		ordWant(t, ordNext(t, sub, kassa.EventPaymentFailed), map[string]any{"id": pm["id"], "failure_reason": reason})
	}
	t.Run("an invalid number is refused without the network", func(t *testing.T) {
		failed(t, f.payCard(o1, 100, payBadLuhn, true), "invalid_number")
	})
	t.Run("store and forward", func(t *testing.T) {
		pm := f.must(f.payCard(o1, 9000, payApprove, true), 201).Data()
		ordWant(t, pm, map[string]any{"status": "captured", "offline": true, "card_last4": "4242"})
		if ref, _ := pm["processor_ref"].(string); !strings.HasPrefix(ref, "offline_") {
			t.Fatalf("processor_ref %q", ref)
		}
		ordWant(t, ordNext(t, sub, kassa.EventPaymentCaptured), map[string]any{"id": pm["id"], "offline": true})
		if f.payPaid(o1) != 9000 {
			t.Fatal("paid_total")
		}
		f.complete(o1)
	})
	t.Run("above the per-payment limit", func(t *testing.T) {
		failed(t, f.payCard(o2, 12000, payApprove, true), "offline_limit_exceeded")
		failed(t, f.payCard(o2, 10001, payApprove, false), "offline_limit_exceeded")
		if f.payPaid(o2) != 0 {
			t.Fatal("paid_total")
		}
	})
	t.Run("at the per-payment limit", func(t *testing.T) {
		pm := f.must(f.payCard(o2, 10000, payApprove, true), 201).Data() // 19000 of 20000 today
		ordWant(t, pm, map[string]any{"status": "captured", "offline": true})
		ordNext(t, sub, kassa.EventPaymentCaptured)
	})
	t.Run("above the daily limit", func(t *testing.T) {
		failed(t, f.payCard(o2, 1001, payApprove, false), "offline_daily_limit_exceeded")
	})
	t.Run("an authorization at the daily limit, captured", func(t *testing.T) {
		pm := f.must(f.payCard(o2, 1000, payApprove, false), 201).Data()
		ordWant(t, pm, map[string]any{"status": "authorized", "offline": true})
		c := f.must(f.do("POST", "/payments/"+pm["id"].(string)+"/capture", "", nil), 200).Data()
		ordWant(t, c, map[string]any{"status": "captured", "offline": true})
		ordNext(t, sub, kassa.EventPaymentCaptured)
		failed(t, f.payCard(o2, 1, payApprove, true), "offline_daily_limit_exceeded")
	})
	t.Run("cash is not limited", func(t *testing.T) {
		pm := f.must(f.payInit(map[string]any{"order_id": o2, "amount": 1000, "method": "cash"}), 201).Data()
		ordWant(t, pm, map[string]any{"status": "captured", "offline": false})
		ordNext(t, sub, kassa.EventPaymentCaptured)
		f.complete(o2)
	})
	t.Run("a raised limit", func(t *testing.T) {
		f.settings(map[string]any{"offline_card_daily_limit": 25000})
		pm := f.must(f.payCard(o3, 5000, payApprove, true), 201).Data()
		ordWant(t, pm, map[string]any{"status": "captured", "offline": true})
		ordNext(t, sub, kassa.EventPaymentCaptured)
	})
	t.Run("back online", func(t *testing.T) {
		offline.Store(false)
		pm := f.must(f.payCard(o3, 4000, payApprove, true), 201).Data()
		ordWant(t, pm, map[string]any{"status": "captured", "offline": false, "processor_ref": "sim_" + pm["id"].(string)})
		ordNext(t, sub, kassa.EventPaymentCaptured)
		failed(t, f.payCard(f.simpleOrder(f.locA, big, 1)["id"].(string), 100, payDecline, true), "card_declined")
	})
	t.Run("the offline flag is listed", func(t *testing.T) {
		var off []string
		for _, pm := range f.payList("", "?method=card&status=captured") {
			if pm["offline"] == true {
				off = append(off, pm["id"].(string))
			}
		}
		if len(off) != 4 {
			t.Fatalf("%d offline captured card payments, want 4", len(off))
		}
	})
}

func TestPaymentListFilters(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Latte", "LAT-1", 450)
	o1 := f.simpleOrder(f.locA, p, 2)["id"].(string)
	o2 := f.simpleOrder(f.locB, p, 2)["id"].(string)
	cash := f.payCash(o1, 400)["id"].(string)
	declined := f.must(f.payCard(o1, 500, payDecline, true), 201).Data()["id"].(string)
	auth := f.must(f.payCard(o2, 300, payApprove, false), 201).Data()["id"].(string)
	card := f.must(f.payCard(o2, 600, payApprove, true), 201).Data()["id"].(string)
	cases := []struct {
		query string
		want  []string
	}{
		{"", []string{cash, declined, auth, card}},
		{"?order_id=" + o1, []string{cash, declined}},
		{"?order_id=" + ordNoSuchID, []string{}},
		{"?status=failed", []string{declined}},
		{"?status=authorized", []string{auth}},
		{"?status=captured", []string{cash, card}},
		{"?status=refunded", []string{}},
		{"?method=card", []string{declined, auth, card}},
		{"?method=cash", []string{cash}},
		{"?method=gift_card", []string{}},
		{"?method=card&order_id=" + o2 + "&status=captured", []string{card}},
		{"?location_id=" + f.locB, []string{auth, card}},
		{"?limit=3", []string{cash, declined, auth}},
	}
	for _, tc := range cases {
		t.Run("list "+tc.query, func(t *testing.T) {
			if got := payIDs(f.payList("", tc.query)); !slices.Equal(got, tc.want) {
				t.Fatalf("ids %v, want %v", got, tc.want)
			}
		})
	}
	for _, q := range []string{"?method=cheque", "?method=CARD", "?status=paid", "?order_id=abc", "?location_id=1", "?limit=-1", "?cursor=x"} {
		t.Run("bad query "+q, func(t *testing.T) {
			mustProblem(t, f.do("GET", "/payments"+q, "", nil), 400, "bad-request")
		})
	}
	t.Run("the order embeds its payments", func(t *testing.T) {
		if got := payIDs(ordItems(f.get(o1), "payments")); !slices.Equal(got, []string{cash, declined}) {
			t.Fatalf("payments %v", got)
		}
	})
}

// paySettlement is a settlement row in a comparable form.
type paySettlement struct {
	date, location, method     string
	count, gross, refunds, net int64
}

func (f *ordFixture) paySettlements(token, query string) []paySettlement {
	f.t.Helper()
	r := f.must(f.do("GET", "/payments/settlements"+query, token, nil), 200)
	out := []paySettlement{}
	for _, it := range r.List() {
		m := it.(map[string]any)
		out = append(out, paySettlement{m["date"].(string), m["location_id"].(string), m["method"].(string),
			ordNum(m["count"]), ordNum(m["gross"]), ordNum(m["refunds"]), ordNum(m["net"])})
	}
	return out
}

func TestPaymentSettlements(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	// 23:55 UTC tomorrow: already the next day in Sydney (UTC+10 or +11).
	now := tn.Clock.Now()
	day := time.Date(now.Year(), now.Month(), now.Day()+1, 23, 55, 0, 0, time.UTC)
	tn.Clock.Advance(day.Sub(now))
	f := ordFixtureOn(t, tn)
	sydney := f.create("/locations", map[string]any{"name": "Sydney", "timezone": "Australia/Sydney"})
	d := day.Format(time.DateOnly)
	d1 := day.AddDate(0, 0, 1).Format(time.DateOnly)
	d0 := day.AddDate(0, 0, -1).Format(time.DateOnly)
	latte, muffin := f.product("Latte", "LAT-1", 450), f.product("Muffin", "MUF-1", 380)

	// Shop A (UTC), day d: cash 500 + 260 for two muffins; a card for four lattes, 5.00 of it refunded;
	// an authorization and a declined card that settle nothing.
	o1 := f.simpleOrder(f.locA, muffin, 2)["id"].(string)
	f.payCash(o1, 500)
	f.must(f.payInit(map[string]any{"order_id": o1, "amount": 260, "method": "cash", "tendered": 300}), 201)
	f.complete(o1)
	o2 := f.simpleOrder(f.locA, latte, 4)["id"].(string)
	f.must(f.payCard(o2, 1800, payApprove, true), 201)
	f.complete(o2)
	f.must(f.do("POST", "/orders/"+o2+"/refund", "", map[string]any{"amount": 500}), 200)
	o3 := f.simpleOrder(f.locA, muffin, 2)["id"].(string)
	f.must(f.payCard(o3, 380, payApprove, false), 201)
	f.must(f.payCard(o3, 380, payDecline, true), 201)
	// Sydney: a cash latte at 23:55 UTC, which is d+1 there.
	o4 := f.simpleOrder(sydney, latte, 1)["id"].(string)
	f.payCash(o4, 450)

	aCard := paySettlement{d, f.locA, "card", 1, 1800, 500, 1300}
	aCash := paySettlement{d, f.locA, "cash", 2, 760, 0, 760}
	sCash := paySettlement{d1, sydney, "cash", 1, 450, 0, 450}
	q := func(from, to, loc string) string {
		v := url.Values{}
		if from != "" {
			v.Set("date_from", from)
		}
		if to != "" {
			v.Set("date_to", to)
		}
		if loc != "" {
			v.Set("location_id", loc)
		}
		return "?" + v.Encode()
	}
	cases := []struct {
		name, query string
		want        []paySettlement
	}{
		{"shop A today", q(d, d, f.locA), []paySettlement{aCard, aCash}},
		{"Sydney on the UTC date", q(d, d, sydney), []paySettlement{}},
		{"Sydney on its local date", q(d1, d1, sydney), []paySettlement{sCash}},
		{"both days, every location", q(d, d1, ""), []paySettlement{aCard, aCash, sCash}},
		{"the default: the week to each location's today", "", []paySettlement{aCard, aCash, sCash}},
		{"only date_to", q("", d, ""), []paySettlement{aCard, aCash}},
		{"the day before", q(d0, d0, ""), []paySettlement{}},
		{"shop B", q(d, d1, f.locB), []paySettlement{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := f.paySettlements("", tc.query); !slices.Equal(got, tc.want) {
				t.Fatalf("settlements\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	t.Run("a refund settles on its own day", func(t *testing.T) {
		tn.Clock.Advance(10 * time.Minute) // 00:05 UTC on d+1
		f.must(f.do("POST", "/orders/"+o1+"/refund", "", map[string]any{"amount": 100}), 200)
		want := []paySettlement{{d1, f.locA, "cash", 0, 0, 100, -100}}
		if got := f.paySettlements("", q(d1, d1, f.locA)); !slices.Equal(got, want) {
			t.Fatalf("settlements %+v, want %+v", got, want)
		}
		if got := f.paySettlements("", q(d, d, f.locA)); !slices.Equal(got, []paySettlement{aCard, aCash}) {
			t.Fatalf("day d changed: %+v", got)
		}
	})
	for _, bad := range []string{q("2024-02-30", "2024-03-01", ""), q(d1, d, ""), q("2023-01-01", "2024-12-31", ""),
		q("yesterday", d, ""), q(d, "tomorrow", ""), q(d, d+"T00:00:00Z", ""), q(d, d, "abc")} {
		t.Run("bad query "+bad, func(t *testing.T) {
			mustProblem(t, f.do("GET", "/payments/settlements"+bad, "", nil), 400, "bad-request")
		})
	}
	t.Run("another org sees none of it", func(t *testing.T) {
		rival := tn.MustOrg("Rival Cafe")
		for _, query := range []string{q(d, d1, ""), q(d, d1, f.locA), ""} {
			if got := f.paySettlements(rival.Owner, query); len(got) != 0 {
				t.Fatalf("rival settlements %+v", got)
			}
		}
	})
}

// A captured payment voided while its order was open returned the money:
// it is no longer part of the day's takings.
func TestPaymentSettlementsLeaveOutVoidedPayments(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Muffin", "MUF-1", 380)
	o := f.simpleOrder(f.locA, p, 1)["id"].(string)
	card := f.must(f.payCard(o, 380, payApprove, true), 201).Data()
	f.must(f.do("POST", "/payments/"+card["id"].(string)+"/void", "", nil), 200)
	cash := f.payCash(o, 380)
	f.must(f.do("POST", "/payments/"+cash["id"].(string)+"/void", "", nil), 200)
	f.payCash(o, 380)
	today := f.tn.Clock.Now().UTC().Format(time.DateOnly)
	got := f.paySettlements("", "?date_from="+today+"&date_to="+today)
	want := []paySettlement{{today, f.locA, "cash", 1, 380, 0, 380}}
	if !slices.Equal(got, want) {
		t.Fatalf("settlements %+v, want %+v (voided payments counted)", got, want)
	}
}

func TestPaymentOrgIsolation(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Latte", "LAT-1", 450)
	o := f.simpleOrder(f.locA, p, 2)["id"].(string)
	auth := f.must(f.payCard(o, 400, payApprove, false), 201).Data()["id"].(string)
	cash := f.payCash(o, 300)["id"].(string)
	rival := f.tn.MustOrg("Rival Cafe")
	do := func(method, path string, body any) *resp { return f.tn.Do(method, "/api/v1"+path, rival.Owner, body) }
	for _, rq := range []struct {
		name, method, path string
		body               any
	}{
		{"capture", "POST", "/payments/" + auth + "/capture", nil},
		{"void an authorization", "POST", "/payments/" + auth + "/void", nil},
		{"void a capture", "POST", "/payments/" + cash + "/void", nil},
		{"pay the order", "POST", "/payments/initiate", map[string]any{"order_id": o, "amount": 100, "method": "cash"}},
	} {
		t.Run(rq.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			f.refused(t, do(rq.method, rq.path, rq.body), 404, "not-found", "", before)
		})
	}
	t.Run("lists never leak", func(t *testing.T) {
		for _, query := range []string{"", "?order_id=" + o, "?location_id=" + f.locA, "?method=card"} {
			r := do("GET", "/payments"+query, nil)
			if r.Status != 200 || len(r.List()) != 0 {
				t.Fatalf("rival lists %s: %d %s", query, r.Status, r.Body)
			}
		}
	})
	got := f.get(o)
	if got["paid_total"] != 300.0 {
		t.Fatalf("paid_total %v", got["paid_total"])
	}
	for _, pm := range ordItems(got, "payments") {
		if pm["id"] == auth && pm["status"] != "authorized" || pm["id"] == cash && pm["status"] != "captured" {
			t.Fatalf("the rival moved payment %v", pm)
		}
	}
}

// Offline card payments racing on one location's daily limit: however
// they interleave, the approved ones stay within the limit.
func TestPaymentOfflineDailyLimitUnderConcurrency(t *testing.T) {
	f := newOrdFixture(t, func(c *node.Config) { c.Offline = func() bool { return true } })
	p := f.product("Tin of tea", "TIN-1", 300)
	f.settings(map[string]any{"offline_card_daily_limit": 1000})
	reqs := make([][2]string, 8)
	bodies := make([]map[string]any, 8)
	for i := range reqs {
		reqs[i] = [2]string{"POST", "/payments/initiate"}
		bodies[i] = map[string]any{"order_id": f.simpleOrder(f.locA, p, 1)["id"], "amount": 300, "method": "card", "card_number": payApprove}
	}
	statuses, answers := payRace(t, f.tn, f.org.Owner, bodies)
	approved, limited := 0, 0
	for i, s := range statuses {
		if s != 201 {
			t.Fatalf("payment %d: %d %s", i, s, answers[i])
		}
		switch {
		case strings.Contains(string(answers[i]), `"status":"captured"`):
			approved++
		case strings.Contains(string(answers[i]), `"failure_reason":"offline_daily_limit_exceeded"`):
			limited++
		default:
			t.Fatalf("payment %d: %s", i, answers[i])
		}
	}
	if approved != 3 || limited != 5 {
		t.Fatalf("%d approved (%d taken offline) and %d refused, want 3 (900 of a 1000 limit) and 5", approved, approved*300, limited)
	}
}

// payRace posts the payments at the same moment, one goroutine each.
func payRace(t *testing.T, tn *testNode, token string, bodies []map[string]any) ([]int, [][]byte) {
	t.Helper()
	statuses, answers, errs := make([]int, len(bodies)), make([][]byte, len(bodies)), make([]error, len(bodies))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, b := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i], answers[i], errs[i] = ordRawDo(tn, "POST", "/payments/initiate", token, b)
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return statuses, answers
}

// Two terminals paying the rest of one order at the same moment: one
// payment is taken, the other is refused, and the order is paid once.
func TestPaymentConcurrentPaymentsOnOneOrder(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Cake", "CAK-1", 2400)
	for round := range 3 {
		o := f.simpleOrder(f.locA, p, 1)["id"].(string)
		statuses, answers := payRace(t, f.tn, f.org.Owner, []map[string]any{
			{"order_id": o, "amount": 2400, "method": "cash"},
			{"order_id": o, "amount": 2400, "method": "card", "card_number": payApprove},
			{"order_id": o, "amount": 2400, "method": "card", "card_number": payApprove, "capture": false},
		})
		if ordCount(statuses, 201) != 1 || ordCount(statuses, 422) != 2 {
			t.Fatalf("round %d: statuses %v: %s | %s | %s", round, statuses, answers[0], answers[1], answers[2])
		}
		got := f.get(o)
		var live int64
		for _, pm := range ordItems(got, "payments") {
			if pm["status"] == "captured" || pm["status"] == "authorized" {
				live += ordNum(pm["amount"])
			}
		}
		if live != 2400 || len(ordItems(got, "payments")) != 1 {
			t.Fatalf("round %d: %d taken in %d payments", round, live, len(ordItems(got, "payments")))
		}
	}
}
