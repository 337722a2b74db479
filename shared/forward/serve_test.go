package forward

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/link"
)

// store is an edge's store with an open order of 500 and its owner.
func store(t *testing.T) (*Edge, *kassa.Actor, *kassa.Order) {
	ctx := context.Background()
	n, err := node.Open(ctx, node.Config{Kind: kassa.NodeEdge, DataDir: t.TempDir(), WriterPriority: -1}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Shutdown(context.Background()) })
	org, owner, err := n.Orgs.CreateOrg(ctx, &kassa.OrgCreate{Name: "Cafe", Currency: "AUD", OwnerEmail: "o@x.test", OwnerPassword: "longenough"})
	if err != nil {
		t.Fatal(err)
	}
	a := &kassa.Actor{OrgID: org.ID, UserID: owner.ID, Role: kassa.RoleOwner, Scopes: kassa.RoleScopes(kassa.RoleOwner)}
	actx := kassa.WithActor(ctx, a)
	svc := n.Services
	loc, err := svc.Locations.CreateLocation(actx, &kassa.LocationCreate{Name: "Shop", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	price := int64(500)
	p, err := svc.Products.CreateProduct(actx, &kassa.ProductCreate{Name: "Tea", SKU: "TEA", BasePrice: &price})
	if err != nil {
		t.Fatal(err)
	}
	o, err := svc.Orders.CreateOrder(actx, &kassa.OrderCreate{LocationID: loc.ID, LineItems: []kassa.OrderLineInput{{ProductID: p.ID, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	e := &Edge{ID: link.Identity{Org: org.ID, Location: loc.ID, Node: n.NodeID()}, Payments: svc.Payments, Orders: svc.Orders,
		Idempotency: svc.Idempotency, Log: slog.New(slog.DiscardHandler)}
	return e, a, o
}

func command(t *testing.T, a *kassa.Actor, op, key string, in any) link.Command {
	cmd := link.Command{Op: op, IdempotencyKey: key}
	cmd.Actor, _ = json.Marshal(actor{OrgID: a.OrgID, UserID: a.UserID, Role: a.Role, Scopes: a.Scopes})
	cmd.Input, _ = json.Marshal(in)
	return cmd
}

// TestARetriedCommandPaysOnce: the hub forwards the client's
// Idempotency-Key, so a payment command that reaches the store twice (the
// hub's first wait timed out, the client retried) is taken once and both
// get the same answer; without the key the second is refused as beyond
// the amount due, as the store would refuse it itself.
func TestARetriedCommandPaysOnce(t *testing.T) {
	e, a, o := store(t)
	in := kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCash}
	first := e.Run(context.Background(), command(t, a, opInitiate, "key-1", in))
	again := e.Run(context.Background(), command(t, a, opInitiate, "key-1", in))
	if len(first.Error) > 0 || !bytes.Equal(first.Result, again.Result) || len(again.Error) > 0 {
		t.Fatalf("first %s %s, again %s %s", first.Result, first.Error, again.Result, again.Error)
	}
	other := e.Run(context.Background(), command(t, a, opInitiate, "", in))
	var we wireError
	if json.Unmarshal(other.Error, &we); we.Kind != kassa.EInvalid || len(we.Fields) != 1 || we.Fields[0].Field != "amount" {
		t.Fatalf("a second payment: %s %s", other.Result, other.Error)
	}
	got, err := e.Orders.FindOrderByID(kassa.WithActor(context.Background(), a), o.ID)
	if err != nil || got.PaidTotal != o.Total || len(got.Payments) != 1 {
		t.Fatalf("paid %d in %d payments, want %d in 1 (%v)", got.PaidTotal, len(got.Payments), o.Total, err)
	}
	// The same key with another input is refused, as at the hub.
	in.Amount = 1
	if rep := e.Run(context.Background(), command(t, a, opInitiate, "key-1", in)); json.Unmarshal(rep.Error, &we) != nil || we.Kind != kassa.EInvalid {
		t.Fatalf("the key with another input: %s %s", rep.Result, rep.Error)
	}
}

// TestACommandForAnotherOrgIsRefused: the edge runs commands only as
// actors of its own org.
func TestACommandForAnotherOrgIsRefused(t *testing.T) {
	e, a, o := store(t)
	stranger := *a
	stranger.OrgID = "01a20a62-0000-7000-8000-000000000000"
	rep := e.Run(context.Background(), command(t, &stranger, opInitiate, "", kassa.PaymentInitiate{OrderID: o.ID, Amount: 1, Method: kassa.PaymentCash}))
	var we wireError
	if json.Unmarshal(rep.Error, &we); we.Kind != kassa.EForbidden {
		t.Fatalf("%s %s", rep.Result, rep.Error)
	}
}

// TestACompleteCommandCompletesAtTheStore: the hub's complete runs at the
// store, which then refuses a void of the sale's payment as it would
// locally; an operation the store does not know is answered with the
// words every release uses, which the hub takes as "run it here".
func TestACompleteCommandCompletesAtTheStore(t *testing.T) {
	e, a, o := store(t)
	pay := e.Run(context.Background(), command(t, a, opInitiate, "", kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCash}))
	var p kassa.Payment
	if json.Unmarshal(pay.Result, &p); p.Status != kassa.PaymentCaptured {
		t.Fatalf("pay: %s %s", pay.Result, pay.Error)
	}
	done := e.Run(context.Background(), command(t, a, opComplete, "", idInput{ID: o.ID}))
	var got kassa.Order
	if json.Unmarshal(done.Result, &got); got.Status != kassa.OrderCompleted || got.PaidTotal != o.Total {
		t.Fatalf("complete: %s %s", done.Result, done.Error)
	}
	void := e.Run(context.Background(), command(t, a, opVoid, "", idInput{ID: p.ID}))
	var we wireError
	if json.Unmarshal(void.Error, &we); we.Kind != kassa.EConflict {
		t.Fatalf("void of a completed sale's payment: %s %s", void.Result, void.Error)
	}
	unknown := e.Run(context.Background(), command(t, a, "order.teleport", "", idInput{ID: o.ID}))
	if json.Unmarshal(unknown.Error, &we); we.Kind != kassa.EBadRequest || we.Message != `unknown command "order.teleport"` ||
		we.Message != unknownOp("order.teleport") {
		t.Fatalf("an unknown operation: %s %s", unknown.Result, unknown.Error)
	}
}
