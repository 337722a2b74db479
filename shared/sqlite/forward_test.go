package sqlite

import (
	"context"
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/processor"
)

// TestOfflineCardPaymentsAreForwardedWhenTheLinkReturns takes two card
// payments with no uplink — one on a card the network will approve, one
// it will decline — then forwards them once online.
func TestOfflineCardPaymentsAreForwardedWhenTheLinkReturns(t *testing.T) {
	n := mustNode(t)
	n.payments.processors[kassa.PaymentCard] = processor.NewCardSimulator()
	offline := true
	n.payments.Offline = func() bool { return offline }
	w := seed(t, n)
	ctx := context.Background()
	pay := func(card string) *kassa.Payment {
		o, err := n.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := n.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCard, CardNumber: card})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Offline || p.Status != kassa.PaymentCaptured || !strings.HasPrefix(*p.ProcessorRef, "offline_") {
			t.Fatalf("offline payment %+v", p)
		}
		return p
	}
	good, bad := pay(processor.CardApprove), pay(processor.CardDecline)
	offline = false
	if n, err := n.payments.ForwardOffline(ctx, 100); err != nil || n != 2 {
		t.Fatalf("forwarded %d, %v", n, err)
	}
	g, _ := n.payments.FindPaymentByID(w.ctx, good.ID)
	b, _ := n.payments.FindPaymentByID(w.ctx, bad.ID)
	if !strings.HasPrefix(*g.ProcessorRef, "sim_fwd_") || g.FailureReason != nil {
		t.Fatalf("approved on forwarding: %+v", g)
	}
	if b.FailureReason == nil || *b.FailureReason != "declined_after_offline: card_declined" || b.Status != kassa.PaymentCaptured {
		t.Fatalf("declined on forwarding: %+v", b)
	}
	if n, _ := n.payments.ForwardOffline(ctx, 100); n != 0 {
		t.Fatalf("forwarded again: %d", n)
	}
}
