package kassaclient_test

import (
	"testing"

	"github.com/google/uuid"

	"kassa.dev/clienttest/kassaclient"
)

// TestGeneratedClientDrivesALayby: a partner's client generated from the
// document opens a lay-by for a customer with a cash deposit, takes a
// card instalment and the rest in cash (which completes it), lists it by
// status, and cancels another for its customer, getting its refund back —
// typed values all the way, against the real hub binary.
func TestGeneratedClientDrivesALayby(t *testing.T) {
	ctx, c, location := signedInOwner(t)
	loc := location.Id
	products, err := c.GetCatalogProductsWithResponse(ctx, nil)
	if err != nil || products.JSON200 == nil || len(products.JSON200.Data) == 0 {
		t.Fatalf("products: %v %s", err, body(products.Body))
	}
	product := products.JSON200.Data[0].Id
	name := "Lee"
	cust, err := c.PostCustomersWithResponse(ctx, nil, kassaclient.CustomerCreate{FirstName: &name})
	if err != nil || cust.JSON201 == nil {
		t.Fatalf("customer: %v %s", err, body(cust.Body))
	}
	open := func() kassaclient.Layby {
		t.Helper()
		r, err := c.PostLaybysWithResponse(ctx, nil, kassaclient.LaybyCreate{LocationId: loc, CustomerId: cust.JSON201.Data.Id,
			LineItems: []kassaclient.LaybyLineInput{{ProductId: product, Quantity: 4}},
			Deposit:   kassaclient.LaybyTender{Method: kassaclient.PaymentMethodCash, Amount: 500}})
		if err != nil || r.JSON201 == nil {
			t.Fatalf("open a lay-by: %v %d %s", err, r.StatusCode(), body(r.Body))
		}
		return r.JSON201.Data
	}
	l := open()
	if l.Status != kassaclient.LaybyStatusOpen || l.Paid != 500 || l.Balance != l.Total-500 || len(l.Payments) != 1 {
		t.Fatalf("opened %+v", l)
	}
	pay := func(id string, tender kassaclient.LaybyTender) kassaclient.Layby {
		t.Helper()
		r, err := c.PostLaybysIdPaymentsWithResponse(ctx, uuid.MustParse(id), nil, tender)
		if err != nil || r.JSON200 == nil {
			t.Fatalf("pay: %v %d %s", err, r.StatusCode(), body(r.Body))
		}
		return r.JSON200.Data
	}
	card := "4242 4242 4242 4242"
	l = pay(l.Id, kassaclient.LaybyTender{Method: kassaclient.PaymentMethodCard, Amount: 100, CardNumber: &card})
	l = pay(l.Id, kassaclient.LaybyTender{Method: kassaclient.PaymentMethodCash, Amount: l.Balance})
	if l.Status != kassaclient.LaybyStatusCompleted || l.Balance != 0 || len(l.Payments) != 3 || l.CompletedAt == nil {
		t.Fatalf("paid in full: %+v", l)
	}
	done := kassaclient.LaybyStatusCompleted
	list, err := c.GetLaybysWithResponse(ctx, &kassaclient.GetLaybysParams{Status: &done})
	if err != nil || list.JSON200 == nil || len(list.JSON200.Data) != 1 || list.JSON200.Data[0].Id != l.Id {
		t.Fatalf("completed lay-bys: %v %s", err, body(list.Body))
	}
	other := open()
	r, err := c.PostLaybysIdCancelWithResponse(ctx, uuid.MustParse(other.Id), nil, kassaclient.LaybyCancel{By: kassaclient.LaybyCancelledByCustomer})
	if err != nil || r.JSON200 == nil {
		t.Fatalf("cancel: %v %s", err, body(r.Body))
	}
	if got := r.JSON200.Data; got.Status != kassaclient.LaybyStatusCancelled || got.Refunded != 500 || got.TerminationCharge != 0 {
		t.Fatalf("cancelled by the customer, no charge set: %+v", got)
	}
	over, err := c.PostLaybysIdPaymentsWithResponse(ctx, uuid.MustParse(other.Id), nil, kassaclient.LaybyTender{Method: kassaclient.PaymentMethodCash, Amount: 1})
	if err != nil || over.ApplicationproblemJSON409 == nil {
		t.Fatalf("an instalment on a cancelled lay-by: %v %d %s", err, over.StatusCode(), body(over.Body))
	}
}
