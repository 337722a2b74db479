package sqlite

import (
	"context"
	"sync"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/processor"
	"kassa.dev/shared/sqlite/engine/pg"
)

// pgHubs opens n hubs' stores on one throwaway PostgreSQL: several hub
// processes behind a load balancer (docs/postgres.md, "Several hubs on
// one PostgreSQL"), each with the services of a node.
func pgHubs(t *testing.T, n int) []*node {
	t.Helper()
	return pgHubsWith(t, n, Options{Hub: true})
}

// pgHubsWith is pgHubs with the stores opened with o.
func pgHubsWith(t *testing.T, n int, o Options) []*node {
	t.Helper()
	pg.Register(PostgresMigrations)
	dsn := pgtest.Start(t).DSN
	var out []*node
	for range n {
		db, err := Open(context.Background(), dsn, o)
		if err != nil {
			t.Fatal(err)
		}
		nd := wrapNode(t, db)
		nd.payments.processors[kassa.PaymentGiftCard] = processor.GiftCard{}
		out = append(out, nd)
	}
	return out
}

// atOnce runs each of fns at the same instant and returns their errors.
func atOnce(fns ...func() error) []error {
	errs := make([]error, len(fns))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn()
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// oneWins checks that of two errors exactly one is nil, and that the
// other is of the kind one hub gives the same request made second (the
// API's problem is chosen by the kind).
func oneWins(t *testing.T, round int, errs []error, alone error) {
	t.Helper()
	if alone == nil {
		t.Fatalf("round %d: on one hub the second request succeeds too", round)
	}
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if kassa.ErrorKind(err) != kassa.ErrorKind(alone) {
			t.Fatalf("round %d: the refused request got %v (%s), one hub gives %v (%s)", round, err, kassa.ErrorKind(err), alone, kassa.ErrorKind(alone))
		}
	}
	if won != 1 {
		t.Fatalf("round %d: %d of two hubs took the money (errors %v), want one", round, won, errs)
	}
}

// TestTwoHubsPayingTheLastAmountOfOneOrderOneIsRefused: two hubs on one
// PostgreSQL take a payment of an order's whole amount at the same
// instant, round after round: one is taken, the other refused as one hub
// refuses a payment beyond what is due, and no order is ever overpaid.
func TestTwoHubsPayingTheLastAmountOfOneOrderOneIsRefused(t *testing.T) {
	hubs := pgHubs(t, 2)
	a, b := hubs[0], hubs[1]
	w := seed(t, a)
	for round := range 8 {
		o, err := a.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		pay := func(n *node) func() error {
			return func() error {
				_, err := n.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCash})
				return err
			}
		}
		errs := atOnce(pay(a), pay(b))
		oneWins(t, round, errs, pay(a)())
		got, err := b.orders.FindOrderByID(w.ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.PaidTotal != o.Total {
			t.Fatalf("round %d: order paid %d of %d", round, got.PaidTotal, o.Total)
		}
	}
}

// TestOneHubsWritersPayingTheLastAmountOfOneOrderOneIsRefused: one hub on
// PostgreSQL runs units on several writer connections (Options.Writers),
// each its own transaction: two payments of an order's whole amount made
// at once on that hub may run side by side, and the order's row lock
// serializes them as it does two hubs' (one taken, one refused, never
// overpaid).
func TestOneHubsWritersPayingTheLastAmountOfOneOrderOneIsRefused(t *testing.T) {
	a := pgHubs(t, 1)[0]
	w := seed(t, a)
	for round := range 8 {
		o, err := a.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		pay := func() error {
			_, err := a.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCash})
			return err
		}
		oneWins(t, round, atOnce(pay, pay), pay())
		got, err := a.orders.FindOrderByID(w.ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.PaidTotal != o.Total {
			t.Fatalf("round %d: order paid %d of %d", round, got.PaidTotal, o.Total)
		}
	}
}

// TestTwoHubsSpendingTheLastBalanceOfOneGiftCardOneIsRefused: two hubs on
// one PostgreSQL each pay an order with all of one gift card's balance at
// the same instant: one is paid, the other refused as one hub refuses a
// card without the balance, and the card never goes below zero.
func TestTwoHubsSpendingTheLastBalanceOfOneGiftCardOneIsRefused(t *testing.T) {
	hubs := pgHubs(t, 2)
	a, b := hubs[0], hubs[1]
	w := seed(t, a)
	if _, err := NewSettingsService(a.db).SetPaymentMethods(w.ctx, []kassa.PaymentMethodConfig{
		{Method: kassa.PaymentCash, Enabled: true}, {Method: kassa.PaymentGiftCard, Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	cards := NewGiftCardService(a.db)
	for round := range 6 {
		var orders [3]*kassa.Order
		for i := range orders {
			o, err := a.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			orders[i] = o
		}
		card, err := cards.IssueGiftCard(w.ctx, &kassa.GiftCardIssue{InitialAmount: orders[0].Total})
		if err != nil {
			t.Fatal(err)
		}
		spend := func(n *node, o *kassa.Order) func() error {
			return func() error {
				_, err := n.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentGiftCard, GiftCardCode: card.Code})
				return err
			}
		}
		errs := atOnce(spend(a, orders[0]), spend(b, orders[1]))
		oneWins(t, round, errs, spend(a, orders[2])())
		got, err := NewGiftCardService(b.db).FindGiftCardByID(w.ctx, card.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Balance != 0 {
			t.Fatalf("round %d: the card's balance is %d, want 0 (spent once)", round, got.Balance)
		}
	}
}

// TestTwoHubsRedeemingTheLastPointsOfOneAccountOneIsRefused: two hubs on
// one PostgreSQL redeem all of a loyalty account's points at the same
// instant: one redeems, the other is refused as on one hub, and the
// balance never goes below zero.
func TestTwoHubsRedeemingTheLastPointsOfOneAccountOneIsRefused(t *testing.T) {
	hubs := pgHubs(t, 2)
	a, b := hubs[0], hubs[1]
	w := seed(t, a) // the account holds 10 points
	for round := range 6 {
		redeem := func(n *node) func() error {
			return func() error {
				_, err := n.loyalty.Redeem(w.ctx, w.account, &kassa.PointsRequest{Points: 10, Reason: "reward"})
				return err
			}
		}
		errs := atOnce(redeem(a), redeem(b))
		oneWins(t, round, errs, redeem(a)())
		acct, err := b.loyalty.FindAccountByID(w.ctx, w.account)
		if err != nil {
			t.Fatal(err)
		}
		if acct.PointsBalance != 0 {
			t.Fatalf("round %d: the account holds %d points, want 0", round, acct.PointsBalance)
		}
		if _, err := a.loyalty.Earn(w.ctx, w.account, &kassa.PointsRequest{Points: 10, Reason: "next round"}); err != nil {
			t.Fatal(err)
		}
	}
}
