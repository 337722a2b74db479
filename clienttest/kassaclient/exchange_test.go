package kassaclient_test

import (
	"testing"

	"github.com/google/uuid"

	"kassa.dev/clienttest/kassaclient"
)

// TestGeneratedClientDrivesAnExchange: a partner's client generated from
// the document sells two of a product to a customer, exchanges one for
// two of another (the return's value pays the new order, the rest is due
// and paid in cash), returns the other onto the customer's store credit
// and reads it — typed values all the way, against the real hub binary.
func TestGeneratedClientDrivesAnExchange(t *testing.T) {
	ctx, c, location := signedInOwner(t)
	loc := location.Id
	products, err := c.GetCatalogProductsWithResponse(ctx, nil)
	if err != nil || products.JSON200 == nil || len(products.JSON200.Data) < 2 {
		t.Fatalf("products: %v %s", err, body(products.Body))
	}
	first, second := products.JSON200.Data[0].Id, products.JSON200.Data[1].Id
	name := "Max"
	cust, err := c.PostCustomersWithResponse(ctx, nil, kassaclient.CustomerCreate{FirstName: &name})
	if err != nil || cust.JSON201 == nil {
		t.Fatalf("customer: %v %s", err, body(cust.Body))
	}
	customer := cust.JSON201.Data.Id
	order, err := c.PostOrdersWithResponse(ctx, nil, kassaclient.OrderCreate{LocationId: loc, CustomerId: &customer,
		LineItems: []kassaclient.OrderLineInput{{ProductId: first, Quantity: 2}}})
	if err != nil || order.JSON201 == nil {
		t.Fatalf("order: %v %s", err, body(order.Body))
	}
	o := order.JSON201.Data
	cash := func(orderID string, amount int64) {
		t.Helper()
		r, err := c.PostPaymentsInitiateWithResponse(ctx, nil, kassaclient.PaymentInitiate{OrderId: orderID, Amount: amount, Method: kassaclient.PaymentMethodCash})
		if err != nil || r.JSON201 == nil {
			t.Fatalf("cash: %v %s", err, body(r.Body))
		}
	}
	complete := func(orderID string) kassaclient.Order {
		t.Helper()
		r, err := c.PostOrdersIdCompleteWithResponse(ctx, uuid.MustParse(orderID), nil, kassaclient.OrderComplete{})
		if err != nil || r.JSON200 == nil {
			t.Fatalf("complete: %v %s", err, body(r.Body))
		}
		return r.JSON200.Data
	}
	cash(o.Id, o.Total)
	o = complete(o.Id)
	line := o.LineItems[0].Id
	yes := true
	x, err := c.PostExchangesWithResponse(ctx, nil, kassaclient.ExchangeRequest{OrderId: o.Id,
		ReturnLines: []kassaclient.ReturnLineInput{{LineItemId: &line, Quantity: 1, Restock: &yes}},
		LineItems:   []kassaclient.OrderLineInput{{ProductId: second, Quantity: 2}}})
	if err != nil || x.JSON200 == nil {
		t.Fatalf("exchange: %v %d %s", err, x.StatusCode(), body(x.Body))
	}
	ex := x.JSON200.Data
	if ex.Return == nil || ex.Order == nil || ex.Return.Amount != o.LineItems[0].Total/2 || ex.Order.CustomerId == nil || *ex.Order.CustomerId != customer {
		t.Fatalf("exchanged: %+v", ex)
	}
	if paid := min(ex.Return.Amount, ex.Order.Total); ex.Order.PaidTotal != paid || ex.Due != ex.Order.Total-paid {
		t.Fatalf("the return's %d paid %d of the new order's %d, %d due", ex.Return.Amount, ex.Order.PaidTotal, ex.Order.Total, ex.Due)
	}
	if ex.Due > 0 {
		cash(ex.Order.Id, ex.Due)
		if done := complete(ex.Order.Id); done.Status != kassaclient.OrderStatusCompleted {
			t.Fatalf("the exchange's order: %s", done.Status)
		}
	}
	to := kassaclient.RefundToStoreCredit
	r, err := c.PostReturnsWithResponse(ctx, nil, kassaclient.ReturnRequest{OrderId: &o.Id, RefundTo: &to,
		LineItems: []kassaclient.ReturnLineInput{{LineItemId: &line, Quantity: 1}}})
	if err != nil || r.JSON200 == nil || r.JSON200.Data.ToCredit != ex.Return.Amount {
		t.Fatalf("return onto store credit: %v %s", err, body(r.Body))
	}
	credit, err := c.GetCustomersIdStoreCreditWithResponse(ctx, uuid.MustParse(customer))
	if err != nil || credit.JSON200 == nil || credit.JSON200.Data.Balance != r.JSON200.Data.ToCredit {
		t.Fatalf("store credit: %v %s", err, body(credit.Body))
	}
}
