package processor

import (
	"context"
	"errors"
	"testing"

	"kassa.dev/shared/kassa"
)

func TestCardSimulatorTestCards(t *testing.T) {
	s := NewCardSimulator()
	ctx := context.Background()
	cases := []struct {
		card     string
		approved bool
		reason   string
		err      error
	}{
		{CardApprove, true, "", nil},
		{"4111 1111 1111 1111", true, "", nil},
		{CardDecline, false, "card_declined", nil},
		{CardInsufficientFunds, false, "insufficient_funds", nil},
		{"4242424242424241", false, "invalid_number", nil},
		{CardProcessingError, false, "", ErrProcessing},
	}
	for _, c := range cases {
		res, err := s.Charge(ctx, kassa.ChargeRequest{PaymentID: "p" + c.card, Amount: 500, Capture: true, CardNumber: c.card})
		if !errors.Is(err, c.err) || res.Approved != c.approved || res.FailureReason != c.reason {
			t.Errorf("%s: %+v, %v", c.card, res, err)
		}
	}
	// Offline, even a decline card is approved and marked for forwarding.
	res, err := s.Charge(ctx, kassa.ChargeRequest{PaymentID: "off", Amount: 500, Capture: true, CardNumber: CardDecline, Offline: true})
	if err != nil || !res.Approved || !res.Offline || res.CardLast4 != "0002" {
		t.Fatalf("offline: %+v %v", res, err)
	}
}

func TestCardRefundsNeverExceedTheCapture(t *testing.T) {
	s := NewCardSimulator()
	ctx := context.Background()
	res, _ := s.Charge(ctx, kassa.ChargeRequest{PaymentID: "x", Amount: 1000, Capture: false, CardNumber: CardApprove})
	if err := s.Capture(ctx, res.Ref, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Refund(ctx, res.Ref, 600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Refund(ctx, res.Ref, 500); err == nil {
		t.Fatal("refunded 1100 of a 1000 capture")
	}
}

func TestCashComputesChange(t *testing.T) {
	res, _ := Cash{}.Charge(context.Background(), kassa.ChargeRequest{PaymentID: "c", Amount: 730, Tendered: 1000})
	if !res.Approved || !res.Captured || res.ChangeDue != 270 {
		t.Fatalf("%+v", res)
	}
}
