package synctest

import (
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/wait"
)

// TestAGiftCardSoldAsALineReloadedAndSpentAtAnotherStoreOffline (issue
// 26's check, docs/giftcards.md "Sold at the till"): store A sells a card
// of 50.00 as a line of a sale, pending until the sale completes; cut off
// from the hub, A reloads it with 20.00 through the register; back online,
// store B — cut off in its turn — takes 28.80 from it. Every record is
// admitted, hub and both stores agree on the card (41.20), the hub owes
// B the 28.80 A's card paid there, and the cards' money is not in A's sales.
func TestAGiftCardSoldAsALineReloadedAndSpentAtAnotherStoreOffline(t *testing.T) {
	s := startGiftStores(t)
	if st := s.hub.Call(t, "PATCH", "/api/v1/settings", s.hubTok, map[string]any{"gift_card_offline_limit": 5000, "gift_card_max_balance": 10000}, nil); st != 200 {
		t.Fatalf("settings: %d", st)
	}
	s.waitSettings(t, "the allowance and the cap at both stores", func(st map[string]any) bool {
		return st["gift_card_offline_limit"] == 5000.0 && st["gift_card_max_balance"] == 10000.0
	})
	const code = "KASSA234GXFT5678"
	a, b := s.stores()[0], s.stores()[1]
	sell := func(st giftStore, line map[string]any, items []any) map[string]any {
		t.Helper()
		var o oneResp
		if c := st.p.Call(t, "POST", "/api/v1/orders", st.tok, map[string]any{"location_id": st.loc, "line_items": items,
			"gift_cards": []any{line}}, &o); c != 201 {
			t.Fatalf("order with a gift card line: %d %v", c, o.Data)
		}
		return o.Data
	}
	payAndComplete := func(st giftStore, id string, body map[string]any) {
		t.Helper()
		var r oneResp
		if c := st.p.Call(t, "POST", "/api/v1/payments/initiate", st.tok, body, &r); c != 201 {
			t.Fatalf("pay: %d %v", c, r.Data)
		}
		if c := st.p.Call(t, "POST", "/api/v1/orders/"+id+"/complete", st.tok, map[string]any{}, &r); c != 200 {
			t.Fatalf("complete: %d %v", c, r.Data)
		}
	}
	cash := func(id string, amount float64) map[string]any {
		return map[string]any{"order_id": id, "amount": amount, "method": "cash"}
	}
	lookup := func(st giftStore) map[string]any {
		var c oneResp
		if st.p.Call(t, "GET", "/api/v1/gift-cards/lookup?code="+code, st.tok, nil, &c) != 200 {
			return map[string]any{}
		}
		return c.Data
	}
	cut := func(st giftStore) {
		st.proxy.cut()
		wait.For(t, 10*time.Second, "the store to see its link down", func() bool { return s.status(t, st.p, st.tok)["connected"] == false })
	}
	restore := func(st giftStore) {
		st.proxy.restore()
		wait.For(t, 20*time.Second, "the store back", func() bool { return s.status(t, st.p, st.tok)["connected"] == true })
	}

	// Sold at A: pending until the sale completes, then active everywhere.
	sold := sell(a, map[string]any{"type": "issue", "amount": 5000, "code": code}, []any{})
	if c := lookup(a); c["status"] != kassa.GiftCardPending || c["balance"] != 0.0 {
		t.Fatalf("the card before its sale completed: %v", c)
	}
	payAndComplete(a, sold["id"].(string), cash(sold["id"].(string), 5000))
	wait.For(t, 20*time.Second, "the card sold at A active at the hub and B", func() bool {
		h, bc := lookup(giftStore{p: s.hub, tok: s.hubTok}), lookup(b)
		return h["status"] == kassa.GiftCardActive && h["balance"] == 5000.0 && bc["status"] == kassa.GiftCardActive && bc["balance"] == 5000.0
	})

	// Reloaded at A while A is cut off from the hub.
	cut(a)
	re := sell(a, map[string]any{"type": "reload", "amount": 2000, "code": code}, []any{})
	payAndComplete(a, re["id"].(string), cash(re["id"].(string), 2000))
	if c := lookup(a); c["balance"] != 7000.0 {
		t.Fatalf("the card at A after its reload offline: %v", c)
	}
	restore(a)
	wait.For(t, 30*time.Second, "the reload at the hub and B", func() bool {
		return lookup(giftStore{p: s.hub, tok: s.hubTok})["balance"] == 7000.0 && lookup(b)["balance"] == 7000.0
	})

	// Spent at B while B is cut off from the hub.
	cut(b)
	o := s.order(t, b.p, b.tok, b.loc)
	payAndComplete(b, o, giftPayment(o, code, 2880))
	restore(b)
	nodes := []giftStore{{p: s.hub, tok: s.hubTok}, a, b}
	wait.For(t, 30*time.Second, "the card at 41.20 at the hub and both stores", func() bool {
		for _, n := range nodes {
			if lookup(n)["balance"] != 4120.0 {
				return false
			}
		}
		return true
	})
	var cs listResp
	s.hub.Call(t, "GET", "/api/v1/sync/conflicts", s.hubTok, nil, &cs)
	for _, c := range cs.Data {
		if c["kind"] != "oversold" { // the basket had no stock
			t.Errorf("conflict at the hub: %v", c)
		}
	}
	var owed listResp
	if s.hub.Call(t, "GET", "/api/v1/reports/gift-cards/owed", s.hubTok, nil, &owed) != 200 || len(owed.Data) != 1 ||
		owed.Data[0]["issued_location_id"] != a.loc || owed.Data[0]["redeemed_location_id"] != b.loc || owed.Data[0]["amount"] != 2880.0 {
		t.Fatalf("gift cards owed: %v; want A's card's 28.80 spent at B", owed.Data)
	}
	var sales listResp
	if s.hub.Call(t, "GET", "/api/v1/reports/sales?group_by=none&location_id="+a.loc, s.hubTok, nil, &sales) != 200 {
		t.Fatal("sales report")
	}
	for _, r := range sales.Data {
		if r["sales"] != 0.0 {
			t.Fatalf("A sold only gift cards, yet its sales report says %v", r)
		}
	}
}
