package httpapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// Reports reconcile to the cent (docs/reports.md). A generated month of
// sales at two stores — Sydney with a 02:00 cutoff across the end of
// daylight saving, New York with a 04:00 cutoff across its start — with
// manual and campaign discounts, split tenders, refunds by amount and by
// line, restocks and stock received, under two tax settings; then every
// report's rows are checked against sums over the raw orders, payments
// and movements, by each store's business day.

// repOrder is an order as GET /orders/{id} shows it.
type repOrder struct {
	ID, Currency, Status string
	LocationID           string  `json:"location_id"`
	CustomerID           *string `json:"customer_id"`
	CreatedBy            *string `json:"created_by"`
	Subtotal             int64
	DiscountTotal        int64 `json:"discount_total"`
	TaxTotal             int64 `json:"tax_total"`
	Total                int64
	GiftCardTotal        int64      `json:"gift_card_total"`
	TaxInclusive         bool       `json:"tax_inclusive"`
	TaxRateBps           int64      `json:"tax_rate_bps"`
	CompletedAt          *time.Time `json:"completed_at"`
	Campaigns            []struct{ Amount int64 }
	LineItems            []struct {
		ID        string
		ProductID string `json:"product_id"`
		Total     int64
		Discount  int64
		Tax       int64
	} `json:"line_items"`
	Payments []struct {
		ID, Method, Status string
		Amount             int64
		CapturedAt         *time.Time `json:"captured_at"`
	}
	Refunds []struct {
		Amount         int64
		GiftCardAmount int64     `json:"gift_card_amount"`
		CreatedAt      time.Time `json:"created_at"`
		Lines          []struct {
			LineItemID string `json:"line_item_id"`
			Amount     int64
		} `json:"line_items"`
		Payments []struct {
			PaymentID string `json:"payment_id"`
			Amount    int64
		}
	}
}

type repWorld struct {
	tn       *testNode
	org      *testOrg
	locs     map[string]kassa.DaySettings
	products []string
	category map[string]string // product → category
	orders   []string
	custs    []string
	accounts []string          // the customers' loyalty accounts
	cards    []string          // gift card codes
	points   int               // loyalty_points payments taken
	register map[string]string // location → its till
	drawer   map[string]string // location → its open drawer
}

func (w *repWorld) token() string {
	// The clock jumps: log in afresh so the token is never expired.
	return w.tn.MustLogin(w.org.OwnerEmail, testPassword)["accessToken"].(string)
}

func (w *repWorld) must(r *resp, what string) map[string]any {
	w.tn.t.Helper()
	if r.Status >= 300 {
		w.tn.t.Fatalf("%s: %d %s", what, r.Status, r.Body)
	}
	return r.Data()
}

// sell rings up, pays (one or two tenders) and completes an order at loc.
func (w *repWorld) sell(rng *rand.Rand, tok, loc string) {
	var lines []any
	for range 1 + rng.IntN(3) {
		lines = append(lines, map[string]any{"product_id": w.products[rng.IntN(len(w.products))], "quantity": 1 + rng.IntN(3)})
	}
	body := map[string]any{"location_id": loc, "line_items": lines}
	if rng.IntN(4) == 0 { // a reload of a card sold through the till: not a sale (issue 26)
		body["gift_cards"] = []any{map[string]any{"type": "reload", "amount": 100 + rng.IntN(900), "code": w.cards[rng.IntN(len(w.cards))]}}
	}
	if rng.IntN(3) == 0 {
		body["discount"] = map[string]any{"type": "percent", "value": 500 + rng.IntN(1500)}
	}
	cust := -1
	if rng.IntN(2) == 0 {
		cust = rng.IntN(len(w.custs))
		body["customer_id"] = w.custs[cust]
	}
	o := w.must(w.tn.Do("POST", "/api/v1/orders", tok, body), "order")
	id, total := o["id"].(string), int64(o["total"].(float64))
	first := total
	if rng.IntN(2) == 0 && total > 1 {
		first = 1 + rng.Int64N(total-1)
	}
	pay := map[string]any{"order_id": id, "amount": first, "method": "cash", "register_id": w.register[loc]}
	if rng.IntN(4) == 0 {
		pay = map[string]any{"order_id": id, "amount": first, "method": "gift_card", "gift_card_code": w.cards[rng.IntN(len(w.cards))]}
	}
	if cust >= 0 && (w.points == 0 || rng.IntN(3) == 0) {
		// Points as the first tender (issue 26): at 1 minor unit a point.
		bal := int64(w.must(w.tn.Do("GET", "/api/v1/loyalty/accounts/"+w.accounts[cust], tok, nil), "account")["points_balance"].(float64))
		if pts := min(first, bal); pts > 0 { // else the tender drawn above stays
			first = pts
			pay = map[string]any{"order_id": id, "amount": first, "method": "loyalty_points"}
			w.points++
		}
	}
	if pay["method"] == "cash" && rng.IntN(2) == 0 {
		pay["tip"] = rng.Int64N(first/5 + 1) // tips (docs/tips.md): never in sales
	}
	w.must(w.tn.Do("POST", "/api/v1/payments/initiate", tok, pay), "first tender")
	if first < total {
		w.must(w.tn.Do("POST", "/api/v1/payments/initiate", tok, map[string]any{"order_id": id, "amount": total - first, "method": "card",
			"card_number": "4242 4242 4242 4242", "tip": rng.Int64N((total-first)/5 + 1)}), "card")
	}
	w.must(w.tn.Do("POST", "/api/v1/orders/"+id+"/complete", tok, map[string]any{}), "complete")
	w.orders = append(w.orders, id)
}

// refund refunds part of an earlier order: by amount or by a line.
func (w *repWorld) refund(rng *rand.Rand, tok string) {
	id := w.orders[rng.IntN(len(w.orders))]
	o := w.must(w.tn.Do("GET", "/api/v1/orders/"+id, tok, nil), "order")
	body := map[string]any{"reason": "test", "restock": rng.IntN(2) == 0}
	// A gift card line's money comes back only by refunding the line.
	left := int64(o["total"].(float64) - o["refunded_total"].(float64))
	for _, g := range o["gift_cards"].([]any) {
		g := g.(map[string]any)
		left -= int64(g["amount"].(float64) - g["taken_back"].(float64))
		if g["refunded"] == false && rng.IntN(2) == 0 {
			body["gift_card_line_ids"] = []any{g["id"]}
			w.must(w.tn.Do("POST", "/api/v1/orders/"+id+"/refund", tok, body), "refund a gift card line")
			return
		}
	}
	if left <= 1 {
		return
	}
	if rng.IntN(2) == 0 {
		line := o["line_items"].([]any)[0].(map[string]any)
		if line["refunded_quantity"].(float64) < line["quantity"].(float64) {
			body["line_items"] = []any{map[string]any{"line_item_id": line["id"], "quantity": 1}}
		}
	}
	if body["line_items"] == nil {
		body["amount"] = 1 + rng.Int64N(left-1)
	} else if rng.IntN(2) == 0 && len(w.custs) > 0 {
		// A return of the line onto a customer's store credit (docs/returns.md).
		w.must(w.tn.Do("POST", "/api/v1/returns", tok, map[string]any{"order_id": id, "refund_to": "store_credit",
			"customer_id": w.custs[rng.IntN(len(w.custs))], "line_items": body["line_items"]}), "return")
		return
	}
	w.must(w.tn.Do("POST", "/api/v1/orders/"+id+"/refund", tok, body), "refund")
}

func newRepWorld(t *testing.T, start time.Time) *repWorld {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	tn.Clock.mu.Lock()
	tn.Clock.t = start
	tn.Clock.mu.Unlock()
	w := &repWorld{tn: tn, org: tn.MustOrg("Reports Co"), locs: map[string]kassa.DaySettings{}, category: map[string]string{}}
	tok := w.org.Owner
	for _, l := range []kassa.DaySettings{{Timezone: "Australia/Sydney", CutoffHour: 2}, {Timezone: "America/New_York", CutoffHour: 4}} {
		id := w.must(tn.Do("POST", "/api/v1/locations", tok, map[string]any{"name": l.Timezone, "timezone": l.Timezone}), "location")["id"].(string)
		w.must(tn.Do("PATCH", "/api/v1/locations/"+id, tok, map[string]any{"day_cutoff_hour": l.CutoffHour}), "cutoff")
		w.locs[id] = l
	}
	for i, cat := range []string{"Coffee", "Food"} {
		c := w.must(tn.Do("POST", "/api/v1/catalog/categories", tok, map[string]any{"name": cat}), "category")["id"].(string)
		for j := range 2 {
			p := w.must(tn.Do("POST", "/api/v1/catalog/products", tok, map[string]any{"name": fmt.Sprintf("%s %d", cat, j),
				"sku": fmt.Sprintf("P-%d-%d", i, j), "base_price": 333 + 250*i + 77*j, "category_id": c}), "product")["id"].(string)
			w.products = append(w.products, p)
			w.category[p] = c
		}
	}
	// Issue 26 (docs/catalog.md): a variant sold by its id, a bundle of a
	// coffee and the variant, and a markdown of the coffees for part of
	// the days sold.
	food, coffee := w.category[w.products[2]], w.category[w.products[0]]
	tee := w.must(tn.Do("POST", "/api/v1/catalog/products", tok, map[string]any{"name": "Tee", "sku": "P-TEE", "base_price": 1999, "category_id": food}), "product")["id"].(string)
	teeM := w.must(tn.Do("POST", "/api/v1/catalog/products/"+tee+"/variants", tok, map[string]any{"options": map[string]any{"size": "M"}, "sku": "P-TEE-M",
		"base_price": 2150}), "variant")["id"].(string)
	pack := w.must(tn.Do("POST", "/api/v1/catalog/products", tok, map[string]any{"name": "Pack", "sku": "P-PACK", "base_price": 2999, "category_id": food,
		"components": []any{map[string]any{"product_id": w.products[0], "quantity": 2}, map[string]any{"product_id": teeM, "quantity": 1}}}), "bundle")["id"].(string)
	w.category[tee], w.category[pack] = food, food
	w.products = append(w.products, teeM, pack)
	w.must(tn.Do("POST", "/api/v1/catalog/markdowns", tok, map[string]any{"name": "March coffee", "type": "percent", "value": 1250,
		"category_ids": []string{coffee}, "starts_at": "2026-03-01T00:00:00Z", "ends_at": "2026-03-21T00:00:00Z"}), "markdown")
	w.must(tn.Do("POST", "/api/v1/campaigns", tok, map[string]any{"name": "Food 15", "type": "discount",
		"rules": []any{map[string]any{"type": "product_discount", "discount_type": "percent", "value": 1500, "product_ids": w.products[2:3]}}}), "campaign")
	camps := tn.Do("GET", "/api/v1/campaigns", tok, nil).List()
	w.must(tn.Do("POST", "/api/v1/campaigns/"+camps[0].(map[string]any)["id"].(string)+"/launch", tok, map[string]any{}), "launch")
	w.must(tn.Do("POST", "/api/v1/loyalty/programs", tok, map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 1}), "program")
	for i := range 3 {
		c := w.must(tn.Do("POST", "/api/v1/customers", tok, map[string]any{"first_name": fmt.Sprintf("C%d", i)}), "customer")["id"].(string)
		w.custs = append(w.custs, c)
		w.accounts = append(w.accounts, w.must(tn.Do("POST", "/api/v1/loyalty/accounts", tok, map[string]any{"customer_id": c}), "account")["id"].(string))
		w.must(tn.Do("POST", "/api/v1/loyalty/accounts/"+w.accounts[i]+"/earn", tok, map[string]any{"points": 500, "reason": "welcome"}), "welcome points")
	}
	w.must(tn.Do("PUT", "/api/v1/payments/methods", tok, map[string]any{"methods": []any{map[string]any{"method": "gift_card", "enabled": true},
		map[string]any{"method": "loyalty_points", "enabled": true}}}), "gift cards and points on")
	for range 3 {
		w.cards = append(w.cards, w.must(tn.Do("POST", "/api/v1/gift-cards", tok, map[string]any{"initial_amount": 100000}), "gift card")["code"].(string))
	}
	w.must(tn.Do("PATCH", "/api/v1/catalog/products/"+w.products[0], tok, map[string]any{"cost": 123}), "cost")
	w.register, w.drawer = map[string]string{}, map[string]string{}
	for loc := range w.locs {
		w.register[loc] = w.must(tn.Do("POST", "/api/v1/registers", tok, map[string]any{"location_id": loc, "name": "Till"}), "register")["id"].(string)
		w.openDrawer(tok, loc)
	}
	return w
}

// openDrawer opens a drawer at loc's till with a float.
func (w *repWorld) openDrawer(tok, loc string) {
	w.drawer[loc] = w.must(w.tn.Do("POST", "/api/v1/drawers", tok, map[string]any{"register_id": w.register[loc],
		"float": map[string]any{"amount": 20000}}), "drawer")["id"].(string)
}

// closeDrawer counts loc's drawer a little over or short, closes it and
// opens the next.
func (w *repWorld) closeDrawer(rng *rand.Rand, tok, loc string) {
	x := w.must(w.tn.Do("GET", "/api/v1/drawers/"+w.drawer[loc]+"/x-report", tok, nil), "x report")
	count := int64(x["expected"].(float64)) + rng.Int64N(101) - 50
	w.must(w.tn.Do("POST", "/api/v1/drawers/"+w.drawer[loc]+"/close", tok, map[string]any{"count": map[string]any{"amount": count}}), "close")
	w.openDrawer(tok, loc)
}

// redeem redeems a few points of an account that has them.
func (w *repWorld) redeem(rng *rand.Rand, tok string) {
	acct := w.accounts[rng.IntN(len(w.accounts))]
	bal := int64(w.must(w.tn.Do("GET", "/api/v1/loyalty/accounts/"+acct, tok, nil), "account")["points_balance"].(float64))
	if bal > 0 {
		w.must(w.tn.Do("POST", "/api/v1/loyalty/accounts/"+acct+"/redeem", tok, map[string]any{"points": 1 + rng.Int64N(bal), "reason": "treat"}), "redeem")
	}
}

// repInstants are the generated instants, in order: most of them near
// the cutoffs and daylight-saving changes of both stores.
func repInstants(rng *rand.Rand, n int) []time.Time {
	anchors := []time.Time{
		time.Date(2026, 4, 4, 16, 0, 0, 0, time.UTC), // Sydney: 03:00 AEDT → 02:00 AEST
		time.Date(2026, 4, 3, 15, 0, 0, 0, time.UTC), // Sydney 02:00 AEDT, the cutoff
		time.Date(2026, 4, 5, 16, 0, 0, 0, time.UTC), // Sydney 02:00 AEST
		time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC),  // New York: 02:00 EST → 03:00 EDT
		time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC),  // New York 04:00 EDT, the cutoff
		time.Date(2026, 3, 7, 9, 0, 0, 0, time.UTC),  // New York 04:00 EST
		time.Date(2026, 3, 20, 4, 0, 0, 0, time.UTC), // midnight-ish in New York, 15:00 in Sydney
	}
	var out []time.Time
	for range n {
		a := anchors[rng.IntN(len(anchors))]
		out = append(out, a.Add(time.Duration(rng.Int64N(int64(4*time.Hour)))-2*time.Hour))
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// repDay is one store's business day as the raw rows sum it.
type repDay struct {
	orders, gross, manual, campaign, tax, sales, refunds int64
	captured, refunded                                   map[string]int64 // by method
}

func TestReportsReconcileToTheCentAcrossDaylightSavingAndCutoff(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("KASSA_REPORT_SEED"), 10, 64); err == nil {
		seed = s // a failing run's seed, to run it again
	}
	t.Logf("seed %d (KASSA_REPORT_SEED runs it again)", seed)
	rng := rand.New(rand.NewPCG(seed, 24))
	w := newRepWorld(t, time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC))
	locIDs := make([]string, 0, 2)
	for id := range w.locs {
		locIDs = append(locIDs, id)
	}
	slices.Sort(locIDs)
	for i, at := range repInstants(rng, 70) {
		w.tn.Clock.mu.Lock()
		w.tn.Clock.t = at
		w.tn.Clock.mu.Unlock()
		tok := w.token()
		if i == 35 { // the second half under exclusive tax at another rate
			w.must(w.tn.Do("PATCH", "/api/v1/settings", tok, map[string]any{"tax_inclusive": false, "tax_rate_bps": 825}), "settings")
		}
		loc := locIDs[rng.IntN(2)]
		switch {
		case len(w.orders) > 3 && rng.IntN(4) == 0:
			w.refund(rng, tok)
		case rng.IntN(10) == 0:
			w.closeDrawer(rng, tok, loc)
		case rng.IntN(10) == 0:
			w.redeem(rng, tok)
		case rng.IntN(6) == 0:
			w.must(w.tn.Do("POST", "/api/v1/inventory/stock/adjust", tok, map[string]any{"location_id": loc,
				"product_id": w.products[rng.IntN(len(w.products)-1)], "reason": "received", "quantity": 1 + rng.IntN(20)}), "stock") // not the bundle (last)
		default:
			w.sell(rng, tok, loc)
		}
	}
	tok := w.token()
	for _, loc := range locIDs { // the day's end: every world has Z reports (one seed in ~250 closed none)
		w.closeDrawer(rng, tok, loc)
	}
	raw := map[string]map[string]*repDay{} // location → day → sums
	day := func(loc, d string) *repDay {
		if raw[loc] == nil {
			raw[loc] = map[string]*repDay{}
		}
		if raw[loc][d] == nil {
			raw[loc][d] = &repDay{captured: map[string]int64{}, refunded: map[string]int64{}}
		}
		return raw[loc][d]
	}
	byProduct, byCategory, byStaff, byCustomer := map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]int64{}
	taxByRate := map[string][2]int64{}
	var orders []repOrder
	for _, id := range w.orders {
		var o repOrder
		if err := json.Unmarshal(w.tn.Do("GET", "/api/v1/orders/"+id, tok, nil).Body, &struct{ Data *repOrder }{&o}); err != nil {
			t.Fatal(err)
		}
		orders = append(orders, o)
		ds := w.locs[o.LocationID]
		d := day(o.LocationID, kassa.BusinessDay(*o.CompletedAt, ds))
		var camp int64
		for _, c := range o.Campaigns {
			camp += c.Amount
		}
		d.orders++
		d.gross += o.Subtotal
		d.campaign += camp
		d.manual += o.DiscountTotal - camp
		d.tax += o.TaxTotal
		d.sales += o.Total - o.GiftCardTotal
		rate := fmt.Sprintf("%d/%v", o.TaxRateBps, o.TaxInclusive)
		taxByRate[rate] = [2]int64{taxByRate[rate][0] + o.TaxTotal, taxByRate[rate][1]}
		for _, l := range o.LineItems {
			byProduct[l.ProductID] += l.Total
			byCategory[w.category[l.ProductID]] += l.Total
		}
		byStaff[*o.CreatedBy] += o.Total - o.GiftCardTotal
		if o.CustomerID != nil {
			byCustomer[*o.CustomerID] += o.Total - o.GiftCardTotal
		} else {
			byCustomer[""] += o.Total - o.GiftCardTotal
		}
		method := map[string]string{}
		for _, p := range o.Payments {
			method[p.ID] = p.Method
			if p.CapturedAt != nil {
				day(o.LocationID, kassa.BusinessDay(*p.CapturedAt, ds)).captured[p.Method] += p.Amount
			}
		}
		for _, r := range o.Refunds {
			rd := day(o.LocationID, kassa.BusinessDay(r.CreatedAt, ds))
			toCredit := r.Amount
			for _, p := range r.Payments {
				rd.refunded[method[p.PaymentID]] += p.Amount
				toCredit -= p.Amount
			}
			rd.refunded["store_credit"] += toCredit // a return onto store credit
			r.Amount -= r.GiftCardAmount            // taken back from a gift card: not sales (issue 26)
			rd.refunds += r.Amount
			rt := taxByRate[rate]
			taxByRate[rate] = [2]int64{rt[0], rt[1] + kassa.RefundTax(r.Amount, o.TaxRateBps)}
			byStaff[*o.CreatedBy] -= r.Amount
			if o.CustomerID != nil {
				byCustomer[*o.CustomerID] -= r.Amount
			} else {
				byCustomer[""] -= r.Amount
			}
			var lines int64
			for _, rl := range r.Lines {
				for _, l := range o.LineItems {
					if l.ID == rl.LineItemID {
						byProduct[l.ProductID] -= rl.Amount
						byCategory[w.category[l.ProductID]] -= rl.Amount
					}
				}
				lines += rl.Amount
			}
			byProduct[""] -= r.Amount - lines
			byCategory[""] -= r.Amount - lines
		}
	}
	q := "?date_from=2026-03-01&date_to=2026-04-30"
	// Sales by business day, per store: every figure of every day.
	for _, loc := range locIDs {
		rows := repRows(t, w.tn, tok, "/reports/sales"+q+"&group_by=day&location_id="+loc)
		got := map[string]map[string]any{}
		for _, r := range rows {
			got[r["group"].(string)] = r
		}
		for d, want := range raw[loc] {
			if want.orders == 0 && want.refunds == 0 {
				continue
			}
			r := got[d]
			if r == nil {
				t.Fatalf("%s %s: no row; want %+v", w.locs[loc].Timezone, d, want)
			}
			for name, v := range map[string]int64{"orders": want.orders, "gross": want.gross, "manual_discounts": want.manual,
				"campaign_discounts": want.campaign, "tax": want.tax, "sales": want.sales, "refunds": want.refunds, "net": want.sales - want.refunds} {
				if int64(r[name].(float64)) != v {
					t.Errorf("%s %s %s: report %v, raw rows %d", w.locs[loc].Timezone, d, name, r[name], v)
				}
			}
			delete(got, d)
		}
		if len(got) != 0 {
			t.Errorf("%s: days with no raw rows: %v", w.locs[loc].Timezone, got)
		}
		// Payments by day and method: captured and refunded per tender.
		for _, r := range repRows(t, w.tn, tok, "/reports/payments"+q+"&group_by=day&location_id="+loc) {
			want := day(loc, r["group"].(string))
			m := r["method"].(string)
			if int64(r["captured"].(float64)) != want.captured[m] || int64(r["refunded"].(float64)) != want.refunded[m] {
				t.Errorf("%s %s %s: payments %v/%v, raw %d/%d", w.locs[loc].Timezone, r["group"], m, r["captured"], r["refunded"], want.captured[m], want.refunded[m])
			}
		}
	}
	// Every grouping's net adds up to the org's net, and each group's to
	// its raw rows.
	var net int64
	for _, days := range raw {
		for _, d := range days {
			net += d.sales - d.refunds
		}
	}
	for g, want := range map[string]map[string]int64{"product": byProduct, "category": byCategory, "staff": byStaff, "customer": byCustomer,
		"hour": nil, "location": nil, "none": nil, "payment_method": nil, "register": nil} {
		var sum int64
		for _, r := range repRows(t, w.tn, tok, "/reports/sales"+q+"&top=1000&group_by="+g) {
			sum += int64(r["net"].(float64))
			if want != nil && int64(r["net"].(float64)) != want[r["group"].(string)] {
				t.Errorf("by %s, %s: net %v, raw rows %d", g, r["group"], r["net"], want[r["group"].(string)])
			}
		}
		if sum != net {
			t.Errorf("by %s: nets add up to %d, raw rows %d", g, sum, net)
		}
	}
	// Tax per rate: on sales and in refunds.
	for _, r := range repRows(t, w.tn, tok, "/reports/tax"+q) {
		want := taxByRate[fmt.Sprintf("%d/%v", int64(r["rate_bps"].(float64)), r["inclusive"])]
		if int64(r["tax"].(float64)) != want[0] || int64(r["refund_tax"].(float64)) != want[1] {
			t.Errorf("tax at %v/%v: %v and %v refunded, raw %v", r["rate_bps"], r["inclusive"], r["tax"], r["refund_tax"], want)
		}
	}
	if w.points == 0 {
		t.Errorf("no sale was paid with points: the reports were not checked with them")
	}
	repCheckMovements(t, w, tok, q, locIDs)
	repCheckRollups(t, w.tn, tok, q)
	repCheckInventory(t, w, tok, locIDs)
	repCheckLoyalty(t, w, tok, q, locIDs[0])
	repCheckGiftCards(t, w, tok, q, locIDs[0], orders)
	repCheckCash(t, w, tok, q)
	repCheckTips(t, w, tok, q, locIDs)
	repCheckCSV[kassa.TipRow](t, w.tn, tok, "/reports/tips"+q+"&group_by=staff")
	repCheckCSV[kassa.SalesRow](t, w.tn, tok, "/reports/sales"+q+"&group_by=day")
	repCheckCSV[kassa.PaymentRow](t, w.tn, tok, "/reports/payments"+q+"&group_by=location")
	repCheckCSV[kassa.InventoryRow](t, w.tn, tok, "/reports/inventory?low_stock=false")
	repCheckCSV[kassa.MovementRow](t, w.tn, tok, "/reports/inventory/movements"+q+"&group_by=product")
	repCheckCSV[kassa.LoyaltyRow](t, w.tn, tok, "/reports/loyalty"+q+"&group_by=day")
	repCheckCSV[kassa.GiftCardRow](t, w.tn, tok, "/reports/gift-cards"+q+"&group_by=day")
	repCheckCSV[kassa.GiftCardOwedRow](t, w.tn, tok, "/reports/gift-cards/owed"+q)
	repCheckCSV[kassa.CashRow](t, w.tn, tok, "/reports/cash"+q+"&group_by=staff")
	repCheckCutoffMove(t, w, tok, q, locIDs[0])
}

// repCheckCutoffMove: a location's zone and day cutoff moved rebook its
// days (a store's zone set right: Sydney's sales booked as Los Angeles's,
// or New York's as Tokyo's, 13 to 18 hours away); the rollups, rebuilt in
// the unit of the change, equal the raw rows again.
func repCheckCutoffMove(t *testing.T, w *repWorld, tok, q, loc string) {
	t.Helper()
	tn, path := w.tn, "/reports/sales"+q+"&group_by=day&location_id="+loc
	before := fmt.Sprint(repRows(t, tn, tok, path))
	zone := map[string]string{"Australia/Sydney": "America/Los_Angeles", "America/New_York": "Asia/Tokyo"}[w.locs[loc].Timezone]
	if r := tn.Do("PATCH", "/api/v1/locations/"+loc, tok, map[string]any{"timezone": zone, "day_cutoff_hour": 6}); r.Status != 200 {
		t.Fatalf("zone and cutoff: %d %s", r.Status, r.Body)
	}
	kept := fmt.Sprint(repRows(t, tn, tok, path))
	if err := tn.N.DropRollups(context.Background()); err != nil {
		t.Fatal(err)
	}
	if raw := fmt.Sprint(repRows(t, tn, tok, path)); raw != kept || raw == before {
		t.Errorf("after the zone and cutoff moved, from the rollups:\n%s\nfrom the raw rows:\n%s\n(before: %s)", kept, raw, before)
	}
}

// repCheckInventory: each product's stock and value at each location is
// its stock level at its cost (the base price, flagged, without one).
func repCheckInventory(t *testing.T, w *repWorld, tok string, locIDs []string) {
	t.Helper()
	price, cost := map[string]int64{}, map[string]any{}
	for _, p := range w.tn.Do("GET", "/api/v1/catalog/products?limit=200&include_variants=true", tok, nil).List() {
		m := p.(map[string]any)
		price[m["id"].(string)], cost[m["id"].(string)] = int64(m["base_price"].(float64)), m["cost"]
	}
	for _, loc := range locIDs {
		want := map[string]string{}
		var total int64
		for _, l := range w.tn.Do("GET", "/api/v1/inventory/stock?limit=200&location_id="+loc, tok, nil).List() {
			m := l.(map[string]any)
			pid, onHand := m["product_id"].(string), int64(m["on_hand"].(float64))
			unit, atPrice := price[pid], cost[pid] == nil
			if !atPrice {
				unit = int64(cost[pid].(float64))
			}
			want[pid] = fmt.Sprint(onHand, unit, atPrice, max(onHand, 0)*unit)
			total += max(onHand, 0) * unit
		}
		got := map[string]string{}
		var sum int64
		for _, r := range repRows(t, w.tn, tok, "/reports/inventory?location_id="+loc) {
			got[r["product_id"].(string)] = fmt.Sprint(int64(r["on_hand"].(float64)), int64(r["unit_cost"].(float64)), r["at_price"], int64(r["value"].(float64)))
			sum += int64(r["value"].(float64))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || sum != total {
			t.Errorf("inventory at %s (on hand, unit cost, at price, value):\nreport %v = %d\nraw    %v = %d", w.locs[loc].Timezone, got, sum, want, total)
		}
	}
}

// repCheckLoyalty: points issued, redeemed and outstanding by business
// day (the zone of loc, given) are the accounts' transactions' sums.
func repCheckLoyalty(t *testing.T, w *repWorld, tok, q, loc string) {
	t.Helper()
	want := map[string]*[4]int64{} // day → issued, redeemed, adjusted, balance after
	var days []string
	for _, a := range w.accounts {
		for _, tx := range w.tn.Do("GET", "/api/v1/loyalty/accounts/"+a+"/transactions?limit=200", tok, nil).List() {
			m := tx.(map[string]any)
			at, _ := time.Parse(time.RFC3339, m["created_at"].(string))
			d := kassa.BusinessDay(at, w.locs[loc])
			if want[d] == nil {
				want[d] = &[4]int64{}
				days = append(days, d)
			}
			pts := int64(m["points"].(float64))
			switch m["type"] {
			case "earn":
				want[d][0] += pts
			case "redeem":
				want[d][1] -= pts
			default:
				want[d][2] += pts
			}
		}
	}
	slices.Sort(days)
	var bal int64
	for _, d := range days {
		bal += want[d][0] - want[d][1] + want[d][2]
		want[d][3] = bal
	}
	got := map[string]*[4]int64{}
	for _, r := range repRows(t, w.tn, tok, "/reports/loyalty"+q+"&group_by=day&location_id="+loc) {
		n := func(k string) int64 { return int64(r[k].(float64)) }
		got[r["group"].(string)] = &[4]int64{n("issued"), n("redeemed"), n("adjusted"), n("outstanding")}
	}
	if fmt.Sprint(repVals(got)) != fmt.Sprint(repVals(want)) || len(days) == 0 {
		t.Errorf("loyalty by day (issued, redeemed, adjusted, outstanding):\nreport %v\nraw    %v", repVals(got), repVals(want))
	}
}

// repCheckGiftCards: gift card money by business day is the cards'
// ledgers' sums, outstanding the running liability; what head office (the
// cards were issued there) owes each store is what the store took on
// cards less what it refunded onto them.
func repCheckGiftCards(t *testing.T, w *repWorld, tok, q, loc string, orders []repOrder) {
	t.Helper()
	want := map[string]*[5]int64{} // day → issued, redeemed, refunded, adjusted, outstanding
	var days []string
	for _, c := range w.tn.Do("GET", "/api/v1/gift-cards?limit=200", tok, nil).List() {
		id := c.(map[string]any)["id"].(string)
		for _, tx := range w.tn.Do("GET", "/api/v1/gift-cards/"+id+"/transactions?limit=200", tok, nil).List() {
			m := tx.(map[string]any)
			at, _ := time.Parse(time.RFC3339, m["created_at"].(string))
			d := kassa.BusinessDay(at, w.locs[loc])
			if want[d] == nil {
				want[d] = &[5]int64{}
				days = append(days, d)
			}
			amt := int64(m["amount"].(float64))
			switch m["type"] {
			case "issue", "reload", "takeback":
				want[d][0] += amt
			case "redeem":
				want[d][1] -= amt
			case "refund":
				want[d][2] += amt
			default:
				want[d][3] += amt
			}
		}
	}
	slices.Sort(days)
	var bal int64
	for _, d := range days {
		bal += want[d][0] - want[d][1] + want[d][2] + want[d][3]
		want[d][4] = bal
	}
	got := map[string]*[5]int64{}
	for _, r := range repRows(t, w.tn, tok, "/reports/gift-cards"+q+"&group_by=day&location_id="+loc) {
		n := func(k string) int64 { return int64(r[k].(float64)) }
		got[r["group"].(string)] = &[5]int64{n("issued"), n("redeemed"), n("refunded"), n("adjusted"), n("outstanding")}
	}
	if fmt.Sprint(repVals(got)) != fmt.Sprint(repVals(want)) {
		t.Errorf("gift cards by day (issued, redeemed, refunded, adjusted, outstanding):\nreport %v\nraw    %v", repVals(got), repVals(want))
	}
	owed := map[string]int64{}
	for _, o := range orders {
		gift := map[string]bool{}
		for _, p := range o.Payments {
			if p.Method == "gift_card" && p.CapturedAt != nil {
				gift[p.ID] = true
				owed[o.LocationID] += p.Amount
			}
		}
		for _, r := range o.Refunds {
			for _, p := range r.Payments {
				if gift[p.PaymentID] {
					owed[o.LocationID] -= p.Amount
				}
			}
		}
	}
	got2 := map[string]int64{}
	for _, r := range repRows(t, w.tn, tok, "/reports/gift-cards/owed"+q) {
		if r["issued_location_id"] != "" {
			t.Errorf("owed by a store that issued no card: %v", r)
		}
		got2[r["redeemed_location_id"].(string)] += int64(r["amount"].(float64))
	}
	for l, v := range owed {
		if v == 0 {
			delete(owed, l)
		}
	}
	if fmt.Sprint(got2) != fmt.Sprint(owed) {
		t.Errorf("what head office owes each store: report %v, raw %v", got2, owed)
	}
}

// repVals is m with its values, for printing and comparing.
func repVals[T any](m map[string]*T) map[string]T {
	out := make(map[string]T, len(m))
	for k, v := range m {
		out[k] = *v
	}
	return out
}

// repCheckCash: closed drawers by business day and by staff member are
// the sums of the Z reports.
func repCheckCash(t *testing.T, w *repWorld, tok, q string) {
	t.Helper()
	for _, g := range []string{"day", "staff"} {
		want := map[string]*[6]int64{}
		for _, z := range w.tn.Do("GET", "/api/v1/z-reports?limit=200", tok, nil).List() {
			m := z.(map[string]any)
			k := m["business_day"].(string)
			if g == "staff" {
				k = m["opened_by"].(string)
			}
			if want[k] == nil {
				want[k] = &[6]int64{}
			}
			n := func(f string) int64 { return int64(m[f].(float64)) }
			v := want[k]
			*v = [6]int64{v[0] + 1, v[1] + n("float"), v[2] + n("cash_sales"), v[3] + n("expected"), v[4] + n("counted"), v[5] + n("over_short")}
		}
		got := map[string]*[6]int64{}
		for _, r := range repRows(t, w.tn, tok, "/reports/cash"+q+"&group_by="+g) {
			n := func(f string) int64 { return int64(r[f].(float64)) }
			got[r["group"].(string)] = &[6]int64{n("sessions"), n("float"), n("cash_sales"), n("expected"), n("counted"), n("over_short")}
		}
		if fmt.Sprint(repVals(got)) != fmt.Sprint(repVals(want)) || len(want) == 0 {
			t.Errorf("cash by %s (sessions, float, cash sales, expected, counted, over/short):\nreport %v\nZ reports %v", g, repVals(got), repVals(want))
		}
	}
}

// repCheckTips: the tips report by business day at each location is the
// sum of the tips given (on their day) and given back (on the refund's),
// cash apart; by staff member it adds up to the same.
func repCheckTips(t *testing.T, w *repWorld, tok, q string, locIDs []string) {
	t.Helper()
	var all [5]int64 // count, tips, refunded, net, cash
	for _, loc := range locIDs {
		want := map[string]*[5]int64{}
		row := func(d string) *[5]int64 {
			if want[d] == nil {
				want[d] = &[5]int64{}
			}
			return want[d]
		}
		for _, it := range w.tn.Do("GET", "/api/v1/tips?limit=200", tok, nil).List() {
			tip := it.(map[string]any)
			if tip["location_id"] != loc || tip["status"] == "voided" {
				continue
			}
			amount, cash := int64(tip["amount"].(float64)), tip["method"] == "cash"
			at, _ := time.Parse(time.RFC3339, tip["created_at"].(string))
			v := row(kassa.BusinessDay(at, w.locs[loc]))
			v[0], v[1], v[3] = v[0]+1, v[1]+amount, v[3]+amount
			if cash {
				v[4] += amount
			}
			if tip["status"] == "refunded" {
				back, _ := time.Parse(time.RFC3339, tip["refunded_at"].(string))
				v = row(kassa.BusinessDay(back, w.locs[loc]))
				v[2], v[3] = v[2]+amount, v[3]-amount
				if cash {
					v[4] -= amount
				}
			}
		}
		got := map[string]*[5]int64{}
		for _, r := range repRows(t, w.tn, tok, "/reports/tips"+q+"&group_by=day&location_id="+loc) {
			n := func(f string) int64 { return int64(r[f].(float64)) }
			got[r["group"].(string)] = &[5]int64{n("count"), n("tips"), n("refunded"), n("net"), n("cash")}
			if n("card") != n("net")-n("cash") {
				t.Errorf("tips on %v: card %d is not net less cash", r["group"], n("card"))
			}
			for i, x := range got[r["group"].(string)] {
				all[i] += x
			}
		}
		if fmt.Sprint(repVals(got)) != fmt.Sprint(repVals(want)) || len(want) == 0 {
			t.Errorf("tips at %s by day (count, tips, refunded, net, cash):\nreport %v\nraw    %v", w.locs[loc].Timezone, repVals(got), repVals(want))
		}
	}
	var staff [5]int64
	for _, r := range repRows(t, w.tn, tok, "/reports/tips"+q+"&group_by=staff") {
		for i, f := range []string{"count", "tips", "refunded", "net", "cash"} {
			staff[i] += int64(r[f].(float64))
		}
	}
	if staff != all {
		t.Errorf("tips by staff add up to %v, by day %v", staff, all)
	}
}

// repCheckMovements: the movements report equals the audit trail's sums
// by business day and reason.
func repCheckMovements(t *testing.T, w *repWorld, tok, q string, locIDs []string) {
	t.Helper()
	for _, loc := range locIDs {
		want := map[string]int64{}
		for cursor := ""; ; {
			r := w.tn.Do("GET", "/api/v1/inventory/movements?limit=200&location_id="+loc+cursor, tok, nil)
			for _, m := range r.List() {
				mv := m.(map[string]any)
				at, _ := time.Parse(time.RFC3339, mv["created_at"].(string))
				want[kassa.BusinessDay(at, w.locs[loc])+"/"+mv["reason"].(string)] += int64(mv["delta"].(float64))
			}
			next, _ := r.JSON()["next_cursor"].(string)
			if next == "" {
				break
			}
			cursor = "&cursor=" + next
		}
		got := map[string]int64{}
		for _, r := range repRows(t, w.tn, tok, "/reports/inventory/movements"+q+"&group_by=day&location_id="+loc) {
			got[r["group"].(string)+"/"+r["reason"].(string)] = int64(r["units"].(float64))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("movements at %s:\nreport %v\nraw    %v", w.locs[loc].Timezone, got, want)
		}
	}
}

// repRows returns a report's JSON rows; it must be a list envelope that
// says what it covered.
func repRows(t *testing.T, tn *testNode, tok, path string) []map[string]any {
	t.Helper()
	r := tn.Do("GET", "/api/v1"+path, tok, nil)
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", path, r.Status, r.Body)
	}
	var env struct {
		Data       []map[string]any
		HasMore    *bool             `json:"has_more"`
		NextCursor *string           `json:"next_cursor"`
		Report     *kassa.ReportInfo `json:"report"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || env.HasMore == nil || *env.HasMore || env.Report == nil || env.Report.Timezone == "" {
		t.Fatalf("%s: not a list envelope with its report: %v %s", path, err, r.Body)
	}
	return env.Data
}

// repCheckCSV: the CSV (by Accept and by format=csv) of a report of rows
// T is the JSON's rows, money (T's fields tagged so) in major units.
func repCheckCSV[T any](t *testing.T, tn *testNode, tok, path string) {
	t.Helper()
	money := map[string]bool{}
	rt := reflect.TypeFor[T]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		money[name] = rt.Field(i).Tag.Get("report") == "money"
	}
	rows := repRows(t, tn, tok, path)
	for _, r := range []*resp{tn.Do("GET", "/api/v1"+path, tok, nil, "Accept", "text/csv"), tn.Do("GET", "/api/v1"+path+"&format=csv", tok, nil)} {
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("%s as CSV: %d %s %s", path, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
		if err != nil || len(recs) != len(rows)+1 {
			t.Fatalf("%s: CSV of %d records for %d rows: %v\n%s", path, len(recs), len(rows), err, r.Body)
		}
		head := recs[0]
		for i, rec := range recs[1:] {
			for j, name := range head {
				want := fmt.Sprint(rows[i][name])
				if rows[i][name] == nil {
					want = "" // null: an empty cell
				}
				if v, ok := rows[i][name].(float64); ok {
					want = fmt.Sprint(int64(v))
					if money[name] {
						want = kassa.FormatMinor(int64(v), 2)
					}
				}
				if rec[j] != want {
					t.Errorf("%s row %d %s: CSV %q, JSON %q", path, i, name, rec[j], want)
				}
			}
		}
	}
}

// A product's cost (docs/reports.md): set, changed and cleared through the
// catalog API (bad input is 422 naming cost and changes nothing); the
// inventory report values stock at cost and flags only the products
// without one; the sales report by product gives the gross margin where
// the cost is known, and by day none.
func TestProductCostValuesStockAndGivesTheMargin(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	org := tn.MustOrg("Cost Co")
	tok := org.Owner
	must := func(r *resp, what string) map[string]any {
		t.Helper()
		if r.Status >= 300 {
			t.Fatalf("%s: %d %s", what, r.Status, r.Body)
		}
		return r.Data()
	}
	loc := must(tn.Do("POST", "/api/v1/locations", tok, map[string]any{"name": "Shop", "timezone": "Australia/Sydney"}), "location")["id"].(string)
	beans := must(tn.Do("POST", "/api/v1/catalog/products", tok, map[string]any{"name": "Beans", "sku": "BEANS", "base_price": 1800, "cost": 725}), "beans")
	cups := must(tn.Do("POST", "/api/v1/catalog/products", tok, map[string]any{"name": "Cup", "sku": "CUP", "base_price": 90}), "cup")
	if beans["cost"] != float64(725) || cups["cost"] != nil {
		t.Fatalf("created: beans cost %v, cup cost %v", beans["cost"], cups["cost"])
	}
	bid, cid := beans["id"].(string), cups["id"].(string)
	for _, bad := range []any{-1, "7", 1.5, int64(1e13)} {
		p := mustProblem(t, tn.Do("POST", "/api/v1/catalog/products", tok, map[string]any{"name": "Bad", "sku": "BAD", "base_price": 1, "cost": bad}), 422, "validation")
		if !strings.Contains(fmt.Sprint(p["errors"]), "cost") {
			t.Fatalf("cost %v: errors %v do not name cost", bad, p["errors"])
		}
		p = mustProblem(t, tn.Do("PATCH", "/api/v1/catalog/products/"+bid, tok, map[string]any{"cost": bad}), 422, "validation")
		if !strings.Contains(fmt.Sprint(p["errors"]), "cost") {
			t.Fatalf("patch cost %v: errors %v do not name cost", bad, p["errors"])
		}
	}
	if r := tn.Do("GET", "/api/v1/catalog/products?q=bad", tok, nil).List(); len(r) != 0 {
		t.Fatalf("a refused product was stored: %v", r)
	}
	if got := must(tn.Do("PATCH", "/api/v1/catalog/products/"+cid, tok, map[string]any{"cost": 30}), "cup cost")["cost"]; got != float64(30) {
		t.Fatalf("cup cost after PATCH: %v", got)
	}
	if got := must(tn.Do("PATCH", "/api/v1/catalog/products/"+cid, tok, map[string]any{"cost": nil}), "cup no cost")["cost"]; got != nil {
		t.Fatalf("cup cost after PATCH null: %v", got)
	}
	if got := must(tn.Do("GET", "/api/v1/catalog/products/"+bid, tok, nil), "beans")["cost"]; got != float64(725) {
		t.Fatalf("beans cost after refused PATCHes: %v", got)
	}
	if r := tn.Do("POST", "/api/v1/catalog/graphql", tok, map[string]any{"query": "{ products { sku cost } }"}); !strings.Contains(string(r.Body), `{"sku":"BEANS","cost":7.25}`) ||
		!strings.Contains(string(r.Body), `{"sku":"CUP","cost":null}`) {
		t.Fatalf("GraphQL's products and their cost: %d %s", r.Status, r.Body)
	}
	for _, p := range []string{bid, cid} {
		must(tn.Do("POST", "/api/v1/inventory/stock/adjust", tok, map[string]any{"location_id": loc, "product_id": p, "reason": "received", "quantity": 10}), "stock")
	}
	o := must(tn.Do("POST", "/api/v1/orders", tok, map[string]any{"location_id": loc, "line_items": []any{
		map[string]any{"product_id": bid, "quantity": 3}, map[string]any{"product_id": cid, "quantity": 2}}}), "order")
	must(tn.Do("POST", "/api/v1/payments/initiate", tok, map[string]any{"order_id": o["id"], "amount": o["total"], "method": "cash"}), "pay")
	must(tn.Do("POST", "/api/v1/orders/"+o["id"].(string)+"/complete", tok, map[string]any{}), "complete")
	inv := map[string]map[string]any{}
	for _, r := range repRows(t, tn, tok, "/reports/inventory?location_id="+loc) {
		inv[r["product_id"].(string)] = r
	}
	if b := inv[bid]; b["on_hand"] != float64(7) || b["unit_cost"] != float64(725) || b["value"] != float64(7*725) || b["at_price"] != false {
		t.Errorf("beans on the shelf: %v; want 7 at cost 7.25 = 50.75, not at price", b)
	}
	if c := inv[cid]; c["on_hand"] != float64(8) || c["unit_cost"] != float64(90) || c["value"] != float64(8*90) || c["at_price"] != true {
		t.Errorf("cups on the shelf: %v; want 8 at base price 0.90, flagged at_price", c)
	}
	var lines []struct {
		ProductID string `json:"product_id"`
		Total     int64
		Tax       int64
	}
	full := must(tn.Do("GET", "/api/v1/orders/"+o["id"].(string), tok, nil), "order")
	b, _ := json.Marshal(full["line_items"])
	json.Unmarshal(b, &lines)
	today := time.Now().In(time.FixedZone("", 11*3600)).Format(time.DateOnly)
	q := "?date_from=" + time.Now().AddDate(0, 0, -2).Format(time.DateOnly) + "&date_to=" + today
	for _, r := range repRows(t, tn, tok, "/reports/sales"+q+"&group_by=product") {
		switch r["group"] {
		case bid:
			want := lines[0].Total - lines[0].Tax - 3*725
			if r["cost"] != float64(3*725) || r["gross_margin"] != float64(want) {
				t.Errorf("beans by product: cost %v, margin %v; want %d, %d", r["cost"], r["gross_margin"], 3*725, want)
			}
		case cid:
			if r["cost"] != nil || r["gross_margin"] != nil {
				t.Errorf("cups by product: cost %v, margin %v; want null (no cost)", r["cost"], r["gross_margin"])
			}
		default:
			t.Errorf("a row of no product sold: %v", r)
		}
	}
	for _, r := range repRows(t, tn, tok, "/reports/sales"+q+"&group_by=day") {
		if r["cost"] != nil {
			t.Errorf("by day, cost %v: want null", r["cost"])
		}
	}
	repCheckCSV[kassa.SalesRow](t, tn, tok, "/reports/sales"+q+"&group_by=product")
	repCheckCSV[kassa.InventoryRow](t, tn, tok, "/reports/inventory?location_id="+loc)
}

// repCheckRollups: the sales report by day, location and none reads the
// same figures from the rollups kept with every sale (checked above), from
// the raw rows once they are dropped, and from the rollups rebuilt from
// the raw rows.
func repCheckRollups(t *testing.T, tn *testNode, tok, q string) {
	t.Helper()
	ctx := context.Background()
	paths := []string{"/reports/sales" + q + "&group_by=day", "/reports/sales" + q + "&group_by=location", "/reports/sales" + q + "&group_by=none"}
	kept := map[string]string{}
	for _, p := range paths {
		kept[p] = fmt.Sprint(repRows(t, tn, tok, p))
	}
	if err := tn.N.DropRollups(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if raw := fmt.Sprint(repRows(t, tn, tok, p)); raw != kept[p] {
			t.Errorf("%s from the raw rows:\n%s\nfrom the rollups kept with the sales:\n%s", p, raw, kept[p])
		}
	}
	if _, err := tn.N.RebuildRollups(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if rebuilt := fmt.Sprint(repRows(t, tn, tok, p)); rebuilt != kept[p] {
			t.Errorf("%s from the rebuilt rollups:\n%s\nkept with the sales:\n%s", p, rebuilt, kept[p])
		}
	}
}
