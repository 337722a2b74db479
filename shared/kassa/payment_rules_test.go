package kassa

import "testing"

func TestPaymentInitiateValidate(t *testing.T) {
	id := "01890000-0000-7000-8000-000000000001"
	no, ten := false, int64(10)
	cases := []struct {
		in    PaymentInitiate
		field string // "" for valid
	}{
		{PaymentInitiate{OrderID: id, Amount: 100, Method: PaymentCash}, ""},
		{PaymentInitiate{OrderID: id, Amount: 100, Method: PaymentCard, CardNumber: "4242", Capture: &no}, ""},
		{PaymentInitiate{OrderID: "x", Amount: 100, Method: PaymentCash}, "order_id"},
		{PaymentInitiate{OrderID: id, Amount: 0, Method: PaymentCash}, "amount"},
		{PaymentInitiate{OrderID: id, Amount: 100, Method: "iou"}, "method"},
		{PaymentInitiate{OrderID: id, Amount: 100, Method: PaymentCash, Tendered: &ten}, "tendered"},
		{PaymentInitiate{OrderID: id, Amount: 100, Method: PaymentCard}, "card_number"},
		{PaymentInitiate{OrderID: id, Amount: 100, Method: PaymentCash, Capture: &no}, "capture"},
	}
	for _, c := range cases {
		err := c.in.Validate()
		if c.field == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.in, err)
			}
			continue
		}
		wantKind(t, err, EInvalid, c.field)
	}
}

func TestPayable(t *testing.T) {
	st := DefaultSettings()
	o := &Order{Number: "A-3", Status: OrderOpen, Total: 1000, PaidTotal: 300,
		Payments: []Payment{{Amount: 300, Status: PaymentCaptured}, {Amount: 200, Status: PaymentAuthorized}}}
	if err := Payable(o, &st, PaymentCash, 500); err != nil {
		t.Fatalf("the amount due: %v", err)
	}
	e := wantKind(t, Payable(o, &st, PaymentCash, 501), EInvalid, "amount")
	if e.Fields[0].Message != "must be at most 500" {
		t.Fatalf("refusal = %+v", e)
	}
	wantKind(t, Payable(o, &st, PaymentGiftCard, 1), EInvalid, "method") // not enabled by default
	o.Status = OrderCompleted
	wantKind(t, Payable(o, &st, PaymentCash, 1), EConflict, "")
}

func TestOfflineCardRefusal(t *testing.T) {
	st := OrgSettings{OfflineCardLimit: 100, OfflineCardDailyLimit: 250}
	for _, c := range []struct {
		amount, taken int64
		want          string
	}{
		{100, 150, ""},
		{101, 0, OfflineLimitExceeded},
		{100, 151, OfflineDailyLimitExceeded},
	} {
		if got := OfflineCardRefusal(&st, c.amount, c.taken); got != c.want {
			t.Errorf("OfflineCardRefusal(%d, taken %d) = %q, want %q", c.amount, c.taken, got, c.want)
		}
	}
}

func TestOutcomeOf(t *testing.T) {
	cases := []struct {
		name   string
		method PaymentMethod
		res    ChargeResult
		want   ChargeOutcome
	}{
		{"declined", PaymentCard, ChargeResult{FailureReason: "card_declined"},
			ChargeOutcome{Status: PaymentFailed, Event: EventPaymentFailed, FailureReason: "card_declined"}},
		{"authorized", PaymentCard, ChargeResult{Approved: true}, ChargeOutcome{Status: PaymentAuthorized}},
		{"captured card", PaymentCard, ChargeResult{Approved: true, Captured: true},
			ChargeOutcome{Status: PaymentCaptured, Event: EventPaymentCaptured, Paid: 700}},
		{"taken offline", PaymentCard, ChargeResult{Approved: true, Captured: true, Offline: true, Token: "tok"},
			ChargeOutcome{Status: PaymentCaptured, Event: EventPaymentCaptured, Paid: 700, Forward: true}},
		{"declined offline", PaymentCard, ChargeResult{Offline: true, Token: "tok", FailureReason: "x"},
			ChargeOutcome{Status: PaymentFailed, Event: EventPaymentFailed, FailureReason: "x"}},
	}
	for _, c := range cases {
		if got := OutcomeOf(c.method, 700, c.res); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	cash := OutcomeOf(PaymentCash, 700, ChargeResult{Approved: true, Captured: true, ChangeDue: 300})
	if cash.ChangeDue == nil || *cash.ChangeDue != 300 || cash.Paid != 700 {
		t.Fatalf("cash = %+v", cash)
	}
}

func TestCapturableAndVoidable(t *testing.T) {
	open, done := &Order{Status: OrderOpen}, &Order{Status: OrderCompleted}
	auth, capt := &Payment{ID: "p", Status: PaymentAuthorized}, &Payment{ID: "p", Status: PaymentCaptured}
	if Capturable(open, auth) != nil || Voidable(open, auth) != nil || Voidable(open, capt) != nil {
		t.Fatal("an authorization of an open order is captured or voided; a capture voided")
	}
	wantKind(t, Capturable(open, capt), EConflict, "")
	wantKind(t, Capturable(done, auth), EConflict, "")
	wantKind(t, Voidable(done, capt), EConflict, "")
	wantKind(t, Voidable(open, &Payment{Status: PaymentVoided}), EConflict, "")
}
