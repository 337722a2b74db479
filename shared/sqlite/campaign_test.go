package sqlite

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

func pastryCampaign(w world) *kassa.CampaignCreate {
	return &kassa.CampaignCreate{Name: "10 % off", Type: kassa.CampaignDiscount, LocationIDs: []string{w.loc},
		Rules: []kassa.CampaignRule{{Type: kassa.RuleProductDiscount, DiscountType: kassa.DiscountPercent, Value: 1000, ProductIDs: []string{w.p1}}}}
}

// mustLaunch creates the campaign in at n and launches it.
func mustLaunch(t *testing.T, n *node, w world, in *kassa.CampaignCreate) *kassa.Campaign {
	t.Helper()
	svc := NewCampaignService(n.db)
	c, err := svc.CreateCampaign(w.ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if c, err = svc.LaunchCampaign(w.ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCampaignsReplicateToEdgesAndOnlyFromTheHub: a campaign made at the
// hub reaches an edge by sync; the edge's store, once enrolled, refuses to
// make or change one (409), and the hub quarantines a campaign an edge
// pushes anyway.
func TestCampaignsReplicateToEdgesAndOnlyFromTheHub(t *testing.T) {
	hub, edge := mustNode(t), mustNode(t)
	w := seed(t, hub)
	syncPair(t, hub, edge)
	sale := func() int64 {
		t.Helper()
		o, err := edge.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		return o.DiscountTotal
	}
	if d := sale(); d != 0 { // and the edge's pricing has read its (no) campaigns
		t.Fatalf("a discount before any campaign: %d", d)
	}
	hubCampaigns := NewCampaignService(hub.db)
	c := mustLaunch(t, hub, w, pastryCampaign(w))
	syncPair(t, hub, edge)
	edgeCampaigns := NewCampaignService(edge.db)
	got, err := edgeCampaigns.FindCampaignByID(w.ctx, c.ID)
	if err != nil || got.Status != kassa.CampaignActive || len(got.Rules) != 1 || got.Rules[0].ProductIDs[0] != w.p1 {
		t.Fatalf("at the edge: %+v %v", got, err)
	}
	if d := sale(); d != 50 { // 10 % of 500: what sync brought prices at once
		t.Fatalf("the synced campaign gave %d, want 50", d)
	}
	syncPair(t, edge, hub)
	mustConverge(t, hub, edge)

	edge.db.SetUnderHub()
	if _, err := edgeCampaigns.CreateCampaign(w.ctx, pastryCampaign(w)); kassa.ErrorKind(err) != kassa.EConflict {
		t.Fatalf("an enrolled edge made a campaign: %v", err)
	}
	if _, err := edgeCampaigns.UpdateCampaign(w.ctx, c.ID, &kassa.CampaignUpdate{Status: kassa.Some(kassa.CampaignEnded)}); kassa.ErrorKind(err) != kassa.EConflict {
		t.Fatalf("an enrolled edge ended a campaign: %v", err)
	}

	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	forged := change.Change{ID: edge.db.NewID(), OrgID: w.org, Entity: "campaign", EntityID: c.ID, Op: change.OpUpdate,
		Fields: map[string]any{"status": kassa.CampaignEnded}, HLC: edge.db.Clock.Now(), Origin: from.NodeID, Actor: kassa.ActorFrom(w.ctx).UserID}
	if _, quarantined, err := hub.db.Ingest(context.Background(), from, []change.Change{forged}); err != nil || quarantined != 1 {
		t.Fatalf("ingest: quarantined %d, %v", quarantined, err)
	}
	if got, _ := hubCampaigns.FindCampaignByID(w.ctx, c.ID); got.Status != kassa.CampaignActive {
		t.Fatalf("an edge ended the hub's campaign: %s", got.Status)
	}
}

// TestTheHubRecomputesCampaignDiscounts: the hub's discount replay counts
// manual discounts only. A cashier's edge order whose discount a campaign
// of the hub explains is admitted; the same discount on a product no
// campaign covers is the cashier's own and is quarantined.
func TestTheHubRecomputesCampaignDiscounts(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	cashier := mustCashier(t, hub, w)
	free := pastryCampaign(w)
	free.Rules[0].Value = 10000 // p1 free
	c := mustLaunch(t, hub, w, free)
	now := hub.db.Now()
	for _, tc := range []struct {
		product     string
		quarantined int
	}{{w.p1, 0}, {w.p2, 1}} {
		if q := forgedFreeSale(t, hub, w, cashier.ID, c.ID, tc.product, now); q != tc.quarantined {
			t.Errorf("a 100 %% line discount on %s: quarantined %d, want %d", tc.product, q, tc.quarantined)
		}
	}
}

// forgedFreeSale pushes to hub, as an edge of w's location, cashier's order
// of one product at 500 made free by campaign (as the wire claims), made
// at occurred; it returns how many of the order line's changes the hub
// quarantined (the order row itself must be admitted).
func forgedFreeSale(t *testing.T, hub *node, w world, cashier, campaign, product string, occurred time.Time) int {
	t.Helper()
	return forgedSale(t, hub, w, cashier, campaign, 500, product, occurred)
}

// forgedSale is forgedFreeSale claiming that campaign gave claimed of the
// line's 500 off (the rest the cashier's own).
func forgedSale(t *testing.T, hub *node, w world, cashier, campaign string, claimed int64, product string, occurred time.Time) int {
	t.Helper()
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: hub.db.NewID()}
	now := hub.db.Now()
	push := func(entity, id string, fields map[string]any) int {
		t.Helper()
		ch := change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: entity, EntityID: id, Op: change.OpInsert,
			Fields: fields, HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: cashier}
		_, q, err := hub.db.Ingest(context.Background(), from, []change.Change{ch})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	order := hub.db.NewID()
	if q := push("order", order, map[string]any{"location_id": w.loc, "number": "E-" + order[len(order)-8:], "status": "open", "channel": "pos",
		"currency": "AUD", "subtotal": 500, "discount_total": 500, "tax_total": 0, "total": 0, "tax_inclusive": true, "tax_rate_bps": 0,
		"created_by": cashier, "occurred_at": occurred, "created_at": now, "updated_at": now,
		"campaigns": fmt.Sprintf(`[{"campaign_id":%q,"name":"x","amount":%d,"points_multiplier":0}]`, campaign, claimed)}); q != 0 {
		var why string
		hub.db.Reader.QueryRow(`SELECT error FROM sync_quarantine ORDER BY created_at DESC LIMIT 1`).Scan(&why)
		t.Fatalf("the order row quarantined: %s", why)
	}
	return push("order_line", hub.db.NewID(), map[string]any{"order_id": order, "position": 0, "product_id": product, "name": "P",
		"sku": "S", "quantity": 1, "unit_price": 500, "modifiers": "[]", "discount": 500, "tax": 0, "total": 0,
		"campaign_discounts": fmt.Sprintf(`[{"campaign_id":%q,"amount":%d}]`, campaign, claimed), "created_at": now, "updated_at": now})
}

// mustCashier makes a cashier of w's org at n.
func mustCashier(t *testing.T, n *node, w world) *kassa.User {
	t.Helper()
	u, err := NewUserService(n.db).CreateUser(w.ctx, &kassa.UserCreate{Email: "c." + strings.ToLower(w.org) + "@sync.test", Role: kassa.RoleCashier, Password: "longenough"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestAForgedEdgeClaimsACampaignOnlyAsItStood: an edge names its order's
// occurred_at, so it picks the instant the hub prices the order's
// campaigns at (campaignsAt) — but only a campaign as it really stood
// then. A cashier's free sale by a campaign is admitted when dated while
// the campaign was active, or up to the hub's clock tolerance before its
// launch (an edge clock running behind); dated before it existed, while
// a draft, after it was paused, or in the future (taken as now: paused),
// its discount is the cashier's own and the line is quarantined.
func TestAForgedEdgeClaimsACampaignOnlyAsItStood(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	cashier := mustCashier(t, hub, w)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	now := t0
	hub.db.Now = func() time.Time { return now }
	svc := NewCampaignService(hub.db)
	free := pastryCampaign(w)
	free.Rules[0].Value = 10000 // p1 free
	c, err := svc.CreateCampaign(w.ctx, free)
	if err != nil {
		t.Fatal(err)
	}
	now = t0.Add(3 * time.Minute)
	if _, err := svc.LaunchCampaign(w.ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(5 * time.Minute)
	if _, err := svc.UpdateCampaign(w.ctx, c.ID, &kassa.CampaignUpdate{Status: kassa.Some(kassa.CampaignPaused)}); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(6 * time.Minute)
	for _, tc := range []struct {
		name        string
		at          time.Time
		quarantined int
	}{
		{"while active", t0.Add(4 * time.Minute), 0},
		{"before it existed", t0.Add(-time.Hour), 1},
		{"while a draft", t0.Add(time.Minute), 1},
		// An edge clock 30 s behind the hub's: a sale just after the
		// launch is dated just before it (within the hub's MaxSkew).
		{"by a clock 30 s behind, just after the launch", t0.Add(3*time.Minute - 30*time.Second), 0},
		{"after the pause", t0.Add(5*time.Minute + 30*time.Second), 1},
		{"in the future", t0.Add(time.Hour), 1},
	} {
		if q := forgedFreeSale(t, hub, w, cashier.ID, c.ID, w.p1, tc.at); q != tc.quarantined {
			t.Errorf("a free sale dated %s: quarantined %d, want %d", tc.name, q, tc.quarantined)
		}
	}
}

// TestTheClockToleranceCountsOnlyCampaignsTheOrderClaims: a cashier's sale
// gets 10 % off by campaign A and, on top, a manual discount to free (which
// a cashier may not give). Free-coffee campaign B launches at the hub 20 s
// after the sale's time, within the tolerance for an edge clock behind.
// B did not price the sale (the order does not name it), so it does not
// explain the manual part: the line is quarantined. Claiming B, it is
// admitted (the tolerance's purpose).
func TestTheClockToleranceCountsOnlyCampaignsTheOrderClaims(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	cashier := mustCashier(t, hub, w)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	now := t0
	hub.db.Now = func() time.Time { return now }
	a := mustLaunch(t, hub, w, pastryCampaign(w))
	free := pastryCampaign(w)
	free.Name, free.Rules[0].Value = "Free pastry", 10000
	now = t0.Add(3 * time.Minute)
	b := mustLaunch(t, hub, w, free)
	now = t0.Add(4 * time.Minute)
	sale := t0.Add(3*time.Minute - 20*time.Second)
	if q := forgedSale(t, hub, w, cashier.ID, a.ID, 50, w.p1, sale); q != 1 {
		t.Errorf("a sale claiming A's 50 with 450 off by hand: quarantined %d, want 1 (B, launched after, never priced it)", q)
	}
	if q := forgedSale(t, hub, w, cashier.ID, b.ID, 500, w.p1, sale); q != 0 {
		t.Errorf("a sale claiming B, dated 20 s before B's launch: quarantined %d, want 0 (an edge clock behind)", q)
	}
}

// TestTwoStoresUseTheLastVoucherOfflineOneConflict: a voucher with one use
// left is redeemed at two stores that cannot see each other; once both
// synced, the hub (and each store) holds both sales and one
// voucher_overused conflict, not two, however often the changes replay.
func TestTwoStoresUseTheLastVoucherOfflineOneConflict(t *testing.T) {
	hub, a, b := mustNode(t), mustNode(t), mustNode(t)
	w := seed(t, hub)
	in := pastryCampaign(w)
	in.VoucherCode, in.UsageLimit = ptr("LAST1"), ptr(int64(1))
	c := mustLaunch(t, hub, w, in)
	syncPair(t, hub, a)
	syncPair(t, hub, b)
	for _, n := range []*node{a, b} {
		if _, err := n.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, VoucherCode: ptr("last1"),
			LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}}); err != nil {
			t.Fatalf("the voucher at a store: %v", err)
		}
		// The store itself now sees it used up.
		if _, err := n.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, VoucherCode: ptr("LAST1"),
			LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}}); kassa.ErrorKind(err) != kassa.EInvalid {
			t.Fatalf("a second use at the same store: %v", err)
		}
	}
	for range 2 { // replays change nothing
		syncPair(t, a, hub)
		syncPair(t, b, hub)
		syncPair(t, a, b) // what the hub's log fans out (ship does not log)
	}
	for name, n := range map[string]*node{"hub": hub, "a": a, "b": b} {
		st, err := NewCampaignService(n.db).CampaignStats(w.ctx, c.ID)
		if err != nil || st.Redemptions != 2 {
			t.Errorf("%s: %+v %v, want both redemptions", name, st, err)
		}
	}
	var kinds []string
	rows, err := hub.db.Reader.Query(`SELECT kind FROM sync_conflicts WHERE org_id = ? AND entity = 'campaign'`, w.org)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		rows.Scan(&k)
		kinds = append(kinds, k)
	}
	rows.Close()
	if len(kinds) != 1 || kinds[0] != kassa.ConflictVoucherOverused {
		t.Fatalf("hub conflicts %v, want one voucher_overused", kinds)
	}
}

// TestCampaignsAtGivesEachCampaignAsItStoodThen: every write of a campaign
// keeps its state as a version from that instant, and campaignsAt (what
// the hub prices an edge's order with) gives, per campaign, the state it
// had at the instant asked: its first for an instant before it existed,
// its current one for an instant in the future, and its row for a
// campaign without versions (made before migration 0018).
func TestCampaignsAtGivesEachCampaignAsItStoodThen(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	now := t0
	hub.db.Now = func() time.Time { return now }
	svc := NewCampaignService(hub.db)
	c, err := svc.CreateCampaign(w.ctx, pastryCampaign(w)) // t0: draft, 10 %
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.CreateCampaign(w.ctx, pastryCampaign(w))
	if err != nil {
		t.Fatal(err)
	}
	now = t0.Add(time.Minute) // launched
	if _, err := svc.LaunchCampaign(w.ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(2 * time.Minute) // paused at 20 %
	rules := pastryCampaign(w).Rules
	rules[0].Value = 2000
	if _, err := svc.UpdateCampaign(w.ctx, c.ID, &kassa.CampaignUpdate{Status: kassa.Some(kassa.CampaignPaused), Rules: kassa.Some(rules)}); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(3 * time.Minute) // active again
	if _, err := svc.UpdateCampaign(w.ctx, c.ID, &kassa.CampaignUpdate{Status: kassa.Some(kassa.CampaignActive)}); err != nil {
		t.Fatal(err)
	}
	// other predates the versions: its row is what there is.
	if _, err := hub.db.Writer.ExecContext(w.ctx, `DELETE FROM campaign_versions WHERE campaign_id = ?`, other.ID); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(4 * time.Minute)
	for _, tc := range []struct {
		name   string
		at     time.Time
		status string
		value  int64
	}{
		{"before it existed", t0.Add(-time.Hour), kassa.CampaignDraft, 1000},
		{"made", t0.Add(30 * time.Second), kassa.CampaignDraft, 1000},
		{"launched", t0.Add(time.Minute), kassa.CampaignActive, 1000},
		{"paused and changed", t0.Add(150 * time.Second), kassa.CampaignPaused, 2000},
		{"resumed", t0.Add(3 * time.Minute), kassa.CampaignActive, 2000},
		{"in the future", t0.Add(time.Hour), kassa.CampaignActive, 2000},
	} {
		cs, err := hub.db.campaignsAt(w.ctx, hub.db.Reader, w.org, tc.at, now)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]kassa.Campaign{}
		for _, c := range cs {
			got[c.ID] = c
		}
		if v := got[c.ID]; len(cs) != 2 || v.Status != tc.status || len(v.Rules) != 1 || v.Rules[0].Value != tc.value ||
			v.Rules[0].ProductIDs[0] != w.p1 || v.LocationIDs[0] != w.loc {
			t.Errorf("%s: campaign %+v (of %d), want %s at %d", tc.name, v, len(cs), tc.status, tc.value)
		}
		if o := got[other.ID]; o.Status != kassa.CampaignDraft || o.Name != "10 % off" {
			t.Errorf("%s: the campaign without versions %+v", tc.name, o)
		}
	}
	// Migration 0018 gives a campaign of an older store one version: its
	// state then, from its created_at.
	m, err := migrationFS.ReadFile("migrations/0018_campaign_versions.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hub.db.Writer.ExecContext(w.ctx, `DELETE FROM campaign_versions`); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.db.Writer.ExecContext(w.ctx, string(m[strings.Index(string(m), "INSERT INTO"):])); err != nil {
		t.Fatal(err)
	}
	campaignsIn(hub.db).histories.forget(w.org) // written around the store's units (writeRow), which forget it
	cs, err := hub.db.campaignsAt(w.ctx, hub.db.Reader, w.org, t0.Add(30*time.Second), now)
	if err != nil || len(cs) != 2 {
		t.Fatalf("after the migration's seed: %+v %v", cs, err)
	}
	for _, got := range cs {
		if got.ID == c.ID && (got.Status != kassa.CampaignActive || got.Rules[0].Value != 2000 || !got.CreatedAt.Equal(t0) || got.LocationIDs[0] != w.loc) {
			t.Errorf("the seeded version %+v, want the campaign as it is", got)
		}
	}
}

// TestRedemptionsAreDerivedAtEveryNodeNotSent: a sale with a campaign
// writes its redemption in the sale's unit and no change record for it
// (change-record format 2); the hub derives the edge sale's own from the
// order with its amounts, and an edge derives a hub-made sale's from the
// hub's log. A redemption record of a format-1 edge is accepted and
// dropped.
func TestRedemptionsAreDerivedAtEveryNodeNotSent(t *testing.T) {
	hub, edge := mustNode(t), mustNode(t)
	w := seed(t, hub)
	c := mustLaunch(t, hub, w, pastryCampaign(w))
	ship(t, hub, edge)
	sell := func(n *node) string {
		t.Helper()
		o, err := n.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 2}}})
		if err != nil || o.DiscountTotal != 100 {
			t.Fatalf("sale: %+v %v", o, err)
		}
		return o.ID
	}
	redemption := func(n *node, order string) string {
		t.Helper()
		var got string
		err := n.db.Reader.QueryRow(`SELECT campaign_id || ' ' || amount || ' ' || order_total FROM campaign_redemptions WHERE order_id = ?`, order).Scan(&got)
		if err != nil {
			t.Fatalf("no redemption of %s: %v", order, err)
		}
		return got
	}
	atEdge, atHub := sell(edge), sell(hub)
	want := c.ID + " 100 900"
	if got := redemption(edge, atEdge); got != want {
		t.Fatalf("the edge's sale redeemed %q, want %q", got, want)
	}
	var sent int
	if err := edge.db.Reader.QueryRow(`SELECT count(*) FROM outbox WHERE entity = 'campaign_redemption'`).Scan(&sent); err != nil || sent != 0 {
		t.Fatalf("%d redemption change records (%v)", sent, err)
	}
	log, err := edge.db.ChangesAfter(w.ctx, 0, 1_000_000, LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	cs := make([]change.Change, len(log))
	for i, e := range log {
		cs[i] = e.Change
	}
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	retired := change.Change{ID: edge.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: "campaign_redemption", EntityID: edge.db.NewID(),
		Op: change.OpInsert, Fields: map[string]any{"order_id": atEdge, "campaign_id": c.ID, "amount": 99999, "order_total": 1},
		HLC: edge.db.Clock.Now(), Origin: from.NodeID, Actor: kassa.ActorFrom(w.ctx).UserID}
	res, quarantined, err := hub.db.Ingest(w.ctx, from, append(cs, retired))
	if err != nil || quarantined != 0 || res.Dropped != 1 {
		t.Fatalf("ingest: %+v, quarantined %d, %v", res, quarantined, err)
	}
	if got := redemption(hub, atEdge); got != want {
		t.Fatalf("the hub derived %q for the edge's sale, want %q", got, want)
	}
	ship(t, hub, edge)
	if got := redemption(edge, atHub); got != want {
		t.Fatalf("the edge derived %q for the hub's sale, want %q", got, want)
	}
	for _, n := range []*node{hub, edge} {
		st, err := NewCampaignService(n.db).CampaignStats(w.ctx, c.ID)
		if err != nil || st.Redemptions != 2 || st.DiscountGiven != 200 || len(st.ByDay) != 1 {
			t.Fatalf("analytics: %+v %v", st, err)
		}
	}
}

// TestTheHubPricesWithACampaignLaunchedSinceItsLastEdgeOrder: the writer
// holds each org's campaign versions (histories) once it priced an edge
// order with them; a campaign launched after that prices the next edge
// order, so a cashier's free sale by it is admitted.
func TestTheHubPricesWithACampaignLaunchedSinceItsLastEdgeOrder(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	cashier := mustCashier(t, hub, w)
	first := mustLaunch(t, hub, w, freeCampaign(w, w.p1))
	if q := forgedFreeSale(t, hub, w, cashier.ID, first.ID, w.p1, hub.db.Now()); q != 0 {
		t.Fatalf("a free sale by the first campaign: %d quarantined", q)
	}
	second := mustLaunch(t, hub, w, freeCampaign(w, w.p2))
	if q := forgedFreeSale(t, hub, w, cashier.ID, second.ID, w.p2, hub.db.Now()); q != 0 {
		t.Fatalf("a free sale by the campaign launched since: %d quarantined", q)
	}
}

// freeCampaign is a campaign of w's location that makes product free.
func freeCampaign(w world, product string) *kassa.CampaignCreate {
	in := pastryCampaign(w)
	in.Rules[0].Value, in.Rules[0].ProductIDs = 10000, []string{product}
	return in
}

// TestOneOrgsCampaignWriteLeavesOtherOrgsCampaignsHeld: on a hub of many
// orgs, one org's campaign write (an automation pausing a campaign on a
// schedule, say) makes the store read again only that org's campaigns.
// Another org's edge orders are priced from the campaign history the
// writer holds and its till's sales from the live campaigns it holds,
// neither read again; the writing org's next edge order and sale are
// priced with the campaign it launched.
func TestOneOrgsCampaignWriteLeavesOtherOrgsCampaignsHeld(t *testing.T) {
	hub := mustNode(t)
	a, b := seedTwo(t, hub)
	cashierA, cashierB := mustCashier(t, hub, a), mustCashier(t, hub, b)
	firstA, onlyB := mustLaunch(t, hub, a, freeCampaign(a, a.p1)), mustLaunch(t, hub, b, freeCampaign(b, b.p1))
	edgeSale := func(w world, cashier, campaign, product string) {
		t.Helper()
		if q := forgedFreeSale(t, hub, w, cashier, campaign, product, hub.db.Now()); q != 0 {
			t.Fatalf("an edge's free sale by campaign %s: %d quarantined", campaign, q)
		}
	}
	tillSale := func(w world, product string) {
		t.Helper()
		o, err := hub.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: product, Quantity: 1}}})
		if err != nil || o.DiscountTotal != 500 {
			t.Fatalf("a sale of a free product: %+v %v", o, err)
		}
	}
	edgeSale(a, cashierA.ID, firstA.ID, a.p1)
	edgeSale(b, cashierB.ID, onlyB.ID, b.p1)
	tillSale(a, a.p1)
	tillSale(b, b.p1)
	histories, live := campaignsIn(hub.db).histories.reads.Load(), campaignsIn(hub.db).live.reads.Load()

	secondA := mustLaunch(t, hub, a, freeCampaign(a, a.p2))
	edgeSale(b, cashierB.ID, onlyB.ID, b.p1)
	tillSale(b, b.p1)
	if got := campaignsIn(hub.db).histories.reads.Load() - histories; got != 0 {
		t.Errorf("org B's campaign history read %d times after org A's launch, want it held", got)
	}
	if got := campaignsIn(hub.db).live.reads.Load() - live; got != 0 {
		t.Errorf("org B's live campaigns read %d times after org A's launch, want them held", got)
	}
	edgeSale(a, cashierA.ID, secondA.ID, a.p2)
	tillSale(a, a.p2)
	if got := campaignsIn(hub.db).histories.reads.Load() - histories; got != 1 {
		t.Errorf("org A's campaign history read %d times after its launch, want once", got)
	}
	if got := campaignsIn(hub.db).live.reads.Load() - live; got != 1 {
		t.Errorf("org A's live campaigns read %d times after its launch, want once", got)
	}
}

// TestARolledBackLaunchNeverPricesAnEdgeOrder: a unit that launches a
// campaign, prices with it (the org's history read in the unit, as a later
// unit of its batch would) and then fails leaves nothing of the launch in
// what the writer holds: a cashier's free sale by the campaign is the
// cashier's own discount and is quarantined. Another org's history stays
// held.
func TestARolledBackLaunchNeverPricesAnEdgeOrder(t *testing.T) {
	hub := mustNode(t)
	a, b := seedTwo(t, hub)
	cashierA, cashierB := mustCashier(t, hub, a), mustCashier(t, hub, b)
	draft, err := NewCampaignService(hub.db).CreateCampaign(a.ctx, freeCampaign(a, a.p1))
	if err != nil {
		t.Fatal(err)
	}
	onlyB := mustLaunch(t, hub, b, freeCampaign(b, b.p1))
	if q := forgedFreeSale(t, hub, b, cashierB.ID, onlyB.ID, b.p1, hub.db.Now()); q != 0 {
		t.Fatalf("org B's free sale: %d quarantined", q)
	}
	held := campaignsIn(hub.db).histories.reads.Load()
	failed := errors.New("a later step fails")
	err = hub.db.Write(a.ctx, func(tx *Tx) error {
		if err := tx.Update(a.ctx, entCampaign, a.org, draft.ID, map[string]any{"status": kassa.CampaignActive}); err != nil {
			return err
		}
		cs, err := hub.db.campaignsAt(a.ctx, tx, a.org, tx.Now, tx.Now)
		if err != nil || len(cs) != 1 || cs[0].Status != kassa.CampaignActive {
			return fmt.Errorf("in the unit: %+v %v", cs, err)
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("the unit: %v", err)
	}
	if q := forgedFreeSale(t, hub, a, cashierA.ID, draft.ID, a.p1, hub.db.Now()); q != 1 {
		t.Fatalf("a free sale by the rolled-back launch: %d quarantined, want the line", q)
	}
	if q := forgedFreeSale(t, hub, b, cashierB.ID, onlyB.ID, b.p1, hub.db.Now()); q != 0 {
		t.Fatalf("org B's free sale after org A's failed unit: %d quarantined", q)
	}
	if got := campaignsIn(hub.db).histories.reads.Load() - held; got != 2 {
		t.Errorf("%d histories read after the failed unit, want 2: org A's in it and after it, not org B's", got)
	}
}

// TestPruningKeepsEachCampaignAsItStoodAtTheCutoff: the hub's retention
// deletes the campaign versions older than the cutoff but, per campaign,
// the one valid at the cutoff. An edge order dated from the cutoff on is
// priced exactly as before; one dated earlier, with each campaign as it
// stood at the cutoff.
func TestPruningKeepsEachCampaignAsItStoodAtTheCutoff(t *testing.T) {
	hub := mustNode(t)
	a, b := seedTwo(t, hub)
	t0 := time.Now().UTC().Truncate(time.Millisecond).Add(-200 * 24 * time.Hour)
	day := func(n int) time.Time { return t0.Add(time.Duration(n) * 24 * time.Hour) }
	now := t0
	hub.db.Now = func() time.Time { return now }
	svc := NewCampaignService(hub.db)
	on := func(d int, w world) context.Context { now = day(d); return w.ctx } // writes at day d
	must := func(c *kassa.Campaign, err error) *kassa.Campaign {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	raised := pastryCampaign(a).Rules
	raised[0].Value = 2000
	c := must(svc.CreateCampaign(on(0, a), pastryCampaign(a)))
	must(svc.LaunchCampaign(on(1, a), c.ID))
	must(svc.UpdateCampaign(on(10, a), c.ID, &kassa.CampaignUpdate{Status: kassa.Some(kassa.CampaignPaused), Rules: kassa.Some(raised)}))
	must(svc.UpdateCampaign(on(50, a), c.ID, &kassa.CampaignUpdate{Status: kassa.Some(kassa.CampaignActive)}))
	must(svc.UpdateCampaign(on(100, a), c.ID, &kassa.CampaignUpdate{Status: kassa.Some(kassa.CampaignPaused)}))
	d := must(svc.CreateCampaign(on(5, a), pastryCampaign(a)))
	must(svc.LaunchCampaign(on(6, a), d.ID))
	e := must(svc.CreateCampaign(on(95, a), pastryCampaign(a)))
	other := must(svc.CreateCampaign(on(2, b), pastryCampaign(b)))
	must(svc.LaunchCampaign(on(3, b), other.ID))

	now = day(150)
	cutoff := day(60) // a retention of 90 days
	instants := []time.Time{cutoff, day(61), day(95), day(100), day(120), now, day(400)}
	asked := func(w world, at time.Time) []kassa.Campaign {
		t.Helper()
		cs, err := hub.db.campaignsAt(w.ctx, hub.db.Reader, w.org, at, now)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	before := map[string][]kassa.Campaign{}
	for _, w := range []world{a, b} {
		for _, i := range instants {
			before[w.org+i.String()] = asked(w, i)
		}
	}
	if n, err := hub.db.PruneCampaignVersions(a.ctx, cutoff); err != nil || n != 5 {
		t.Fatalf("pruned %d versions, %v; want 5", n, err)
	}
	name := map[string]string{c.ID: "c", d.ID: "d", e.ID: "e", other.ID: "other"}
	left := map[string][]string{}
	for _, r := range dumpRows(t, hub.db, `SELECT campaign_id, valid_from, state ->> 'status' FROM campaign_versions ORDER BY valid_from`) {
		left[name[r[0].(string)]] = append(left[name[r[0].(string)]], fmt.Sprint(r[1], " ", r[2]))
	}
	version := func(d int, status string) string { return fmtTime(day(d)) + " " + status }
	want := map[string][]string{
		"c":     {version(50, kassa.CampaignActive), version(100, kassa.CampaignPaused)},
		"d":     {version(6, kassa.CampaignActive)},
		"e":     {version(95, kassa.CampaignDraft)},
		"other": {version(3, kassa.CampaignActive)},
	}
	if !reflect.DeepEqual(left, want) {
		t.Errorf("versions left %v, want %v", left, want)
	}
	for _, w := range []world{a, b} {
		for _, i := range instants {
			if got := asked(w, i); !reflect.DeepEqual(got, before[w.org+i.String()]) {
				t.Errorf("at %s, after pruning: %+v, want as before %+v", i, got, before[w.org+i.String()])
			}
		}
	}
	// Before the cutoff: c as it stood at the cutoff (active at 20 %), no
	// longer as launched (10 %); the history held before pruning is gone.
	for _, got := range asked(a, day(5)) {
		if got.ID == c.ID && (got.Status != kassa.CampaignActive || got.Rules[0].Value != 2000) {
			t.Errorf("before the cutoff: %s at %d, want active at 2000", got.Status, got.Rules[0].Value)
		}
	}
	if n, err := hub.db.PruneCampaignVersions(a.ctx, cutoff); err != nil || n != 0 {
		t.Fatalf("pruned again: %d, %v", n, err)
	}
}
