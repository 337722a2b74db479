package kassa

import (
	"errors"
	"testing"
)

// wantKind fails unless err is an *Error of kind naming field (if given).
func wantKind(t *testing.T, err error, kind Kind, field string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != kind {
		t.Fatalf("error = %v, want %s", err, kind)
	}
	if field != "" && (len(e.Fields) != 1 || e.Fields[0].Field != field) {
		t.Fatalf("fields = %+v, want one naming %s", e.Fields, field)
	}
	return e
}

func TestOrderStatusLattice(t *testing.T) {
	chain := []string{OrderOpen, OrderCancelled, OrderCompleted, OrderPartiallyRefunded, OrderRefunded}
	for i := 1; i < len(chain); i++ {
		if OrderStatusRank(chain[i]) <= OrderStatusRank(chain[i-1]) {
			t.Errorf("%s must outrank %s", chain[i], chain[i-1])
		}
	}
	if !OrderStatusAfter(OrderCancelled, OrderCompleted) || OrderStatusAfter(OrderCompleted, OrderOpen) {
		t.Error("a complete must beat a cancel, and a completed order never returns to open")
	}
	if OrderStatusRank("bogus") > OrderStatusRank(OrderOpen) {
		t.Error("an unknown state must never win")
	}
}

func TestCancellableAndCompletable(t *testing.T) {
	open := &Order{Number: "A-1", Status: OrderOpen, Total: 1000}
	if err := Cancellable(open); err != nil {
		t.Fatalf("an open unpaid order: %v", err)
	}
	wantKind(t, Cancellable(&Order{Status: OrderOpen, PaidTotal: 1}), EConflict, "")
	wantKind(t, Cancellable(&Order{Status: OrderCompleted}), EConflict, "")
	wantKind(t, Completable(open), EConflict, "") // not paid
	open.PaidTotal = 1000
	if err := Completable(open); err != nil {
		t.Fatalf("a paid open order: %v", err)
	}
	wantKind(t, Completable(&Order{Status: OrderCancelled, PaidTotal: 5, Total: 5}), EConflict, "")
}

// refundable is a completed order of two lines, 3 × 1000 and 1 × 500,
// paid by two payments.
func refundable() *Order {
	return &Order{Number: "A-2", Status: OrderCompleted, Total: 3500, PaidTotal: 3500,
		LineItems: []LineItem{{ID: "l1", Quantity: 3, Total: 3000}, {ID: "l2", Quantity: 1, Total: 500}},
		Payments: []Payment{{ID: "p1", Amount: 2000, Status: PaymentCaptured},
			{ID: "p2", Amount: 1500, Status: PaymentCaptured}}}
}

func TestPlanRefund(t *testing.T) {
	amt := func(n int64) *int64 { return &n }
	t.Run("everything left", func(t *testing.T) {
		o := refundable()
		o.RefundedTotal, o.LineItems[0].RefundedQuantity = 1000, 1
		p, err := PlanRefund(o, &RefundRequest{})
		if err != nil || p.Amount != 2500 || len(p.Lines) != 2 || p.Lines[0].Quantity != 2 || p.Lines[0].Amount != 2000 {
			t.Fatalf("plan = %+v, %v", p, err)
		}
	})
	t.Run("by amount", func(t *testing.T) {
		p, err := PlanRefund(refundable(), &RefundRequest{Amount: amt(700)})
		if err != nil || p.Amount != 700 || p.Lines == nil || len(p.Lines) != 0 {
			t.Fatalf("plan = %+v, %v", p, err)
		}
		e := wantKind(t, mustErr(PlanRefund(refundable(), &RefundRequest{Amount: amt(3501)})), EInvalid, "amount")
		if e.Fields[0].Message != "must be at most 3500" || e.Message != "the refund exceeds what was paid" {
			t.Fatalf("refusal = %+v", e)
		}
	})
	t.Run("by line", func(t *testing.T) {
		p, err := PlanRefund(refundable(), &RefundRequest{LineItems: []RefundLineInput{{"l1", 2}, {"l2", 1}}})
		if err != nil || p.Amount != 2500 || len(p.Lines) != 2 {
			t.Fatalf("plan = %+v, %v", p, err)
		}
		wantKind(t, mustErr(PlanRefund(refundable(), &RefundRequest{LineItems: []RefundLineInput{{"l1", 1}, {"l1", 1}}})),
			EInvalid, "line_items[1].line_item_id")
		wantKind(t, mustErr(PlanRefund(refundable(), &RefundRequest{LineItems: []RefundLineInput{{"nope", 1}}})),
			EInvalid, "line_items[0].line_item_id")
		e := wantKind(t, mustErr(PlanRefund(refundable(), &RefundRequest{LineItems: []RefundLineInput{{"l2", 2}}})),
			EInvalid, "line_items[0].quantity")
		if e.Fields[0].Message != "at most 1 left to refund" {
			t.Fatalf("refusal = %+v", e)
		}
	})
	t.Run("never more than was paid", func(t *testing.T) {
		o := refundable()
		o.PaidTotal = 1000 // the order was completed, then a payment voided
		p, err := PlanRefund(o, &RefundRequest{LineItems: []RefundLineInput{{"l1", 3}}})
		if err != nil || p.Amount != 1000 {
			t.Fatalf("plan = %+v, %v", p, err)
		}
	})
	t.Run("states", func(t *testing.T) {
		o := refundable()
		o.Status = OrderOpen
		wantKind(t, mustErr(PlanRefund(o, &RefundRequest{})), EConflict, "")
		o = refundable()
		o.Status, o.RefundedTotal = OrderRefunded, 3500
		wantKind(t, mustErr(PlanRefund(o, &RefundRequest{})), EConflict, "")
		o.Status = OrderPartiallyRefunded
		wantKind(t, mustErr(PlanRefund(o, &RefundRequest{})), EConflict, "") // nothing left
	})
}

func mustErr(_ RefundPlan, err error) error { return err }

func TestRefundSourcesNewestFirst(t *testing.T) {
	o := refundable()
	o.Payments = append(o.Payments, Payment{ID: "p3", Amount: 900, Status: PaymentVoided})
	o.Payments[1].RefundedAmount, o.Payments[1].Status = 1000, PaymentPartiallyRefunded
	parts, short := RefundSources(o, 1200)
	if short != 0 || len(parts) != 2 || parts[0] != (RefundPayment{PaymentID: "p2", Amount: 500}) ||
		parts[1] != (RefundPayment{PaymentID: "p1", Amount: 700}) {
		t.Fatalf("parts = %+v, short %d", parts, short)
	}
	if _, short := RefundSources(o, 3000); short != 500 {
		t.Fatalf("short = %d, want 500", short)
	}
	if RefundedPaymentStatus(&o.Payments[1], 500) != PaymentRefunded || RefundedPaymentStatus(&o.Payments[0], 700) != PaymentPartiallyRefunded {
		t.Fatal("payment status after a refund")
	}
	if RefundedOrderStatus(o, 3500) != OrderRefunded || RefundedOrderStatus(o, 3499) != OrderPartiallyRefunded {
		t.Fatal("order status after a refund")
	}
}

func TestInvalidFieldLeavesTheWordingToHTTP(t *testing.T) {
	e := InvalidField("sku", "is required")
	if e.Kind != EInvalid || e.Message != "" || len(e.Fields) != 1 || e.Error() != "kassa validation: sku is required" {
		t.Fatalf("InvalidField = %#v (%s)", e, e)
	}
	var v Validation
	v.Check(false, "name", "is required")
	if err := v.Err(); err.(*Error).Message != "" || ErrorKind(err) != EInvalid {
		t.Fatalf("Validation.Err = %#v", err)
	}
}

func TestPickModifiers(t *testing.T) {
	size := &ModifierGroup{ID: "g1", Name: "Size", MinSelections: 1, MaxSelections: 1,
		Options: []ModifierOption{{ID: "s", Name: "Small", IsDefault: true}, {ID: "l", Name: "Large", PriceAdjustment: 50}}}
	extras := &ModifierGroup{ID: "g2", Name: "Extras", MaxSelections: 2,
		Options: []ModifierOption{{ID: "e1", Name: "Shot", PriceAdjustment: 40}, {ID: "e2", Name: "Syrup", PriceAdjustment: 30}, {ID: "e3", Name: "Cream"}}}
	groups := []*ModifierGroup{size, extras}

	mods, problems := PickModifiers("Latte", groups, nil)
	if len(problems) != 0 || len(mods) != 1 || mods[0].OptionID != "s" || mods[0].GroupID != "g1" {
		t.Fatalf("no choice takes the required group's default: %+v %v", mods, problems)
	}
	mods, problems = PickModifiers("Latte", groups, []string{"e2", "l", "e1"})
	if len(problems) != 0 || len(mods) != 3 || mods[0].OptionID != "l" || mods[1].OptionID != "e1" || mods[2].PriceAdjustment != 30 {
		t.Fatalf("choices in group order: %+v %v", mods, problems)
	}
	_, problems = PickModifiers("Latte", groups, []string{"e1", "e2", "e3"})
	if len(problems) != 1 || problems[0] != "Extras needs 0 to 2 choices" {
		t.Fatalf("too many choices: %v", problems)
	}
	_, problems = PickModifiers("Latte", groups, []string{"x"})
	if len(problems) != 1 || problems[0] != "options not offered on Latte" {
		t.Fatalf("an option of no group: %v", problems)
	}
	if mods, _ := PickModifiers("Tea", nil, nil); mods == nil {
		t.Fatal("a line without modifiers has an empty list, not null")
	}
}
