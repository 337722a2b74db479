package node_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/change"
	"kassa.dev/sync/wait"
)

// TestSyncedBumpReachesTheKitchenOnceAcrossARestart: a bump made at
// another node, applied just before the node shuts down, is on the kitchen
// feed after the restart, once: the ticket job records what sync made due
// (at the latest while it stops, before the store closes), and its
// start-up sweep records nothing twice.
func TestSyncedBumpReachesTheKitchenOnceAcrossARestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *node.Node {
		n, err := node.Open(ctx, node.Config{Kind: kassa.NodeEdge, DataDir: dir}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := open()
	orgID, err := demo.Seed(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	owner, loc, err := demo.OwnerAndLocation(ctx, n, orgID)
	if err != nil {
		t.Fatal(err)
	}
	actx := node.Actor(ctx, owner)
	products, err := n.Services.Products.FindProducts(actx, kassa.ProductFilter{Page: kassa.Page{Limit: 1}})
	if err != nil || len(products.Items) == 0 {
		t.Fatalf("products: %v %v", products, err)
	}
	o, err := n.Services.Orders.CreateOrder(actx, &kassa.OrderCreate{LocationID: loc,
		LineItems: []kassa.OrderLineInput{{ProductID: products.Items[0].ID, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	remote := change.Change{ID: n.NewID(), OrgID: orgID, LocationID: loc, Entity: "order", EntityID: o.ID,
		Op: change.OpUpdate, Fields: map[string]any{"kitchen_status": kassa.KitchenInProgress}, HLC: n.Stamp(), Origin: n.NewID()}
	if err := n.ApplyRemote(ctx, []change.Change{remote}); err != nil {
		t.Fatal(err)
	}
	if err := n.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	n = open()
	defer n.Shutdown(ctx)
	events := func() []kassa.TicketEvent {
		evs, err := n.Services.KDS.TicketEvents(actx, kassa.TicketEventFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	wait.For(t, 5*time.Second, "the synced bump on the kitchen feed", func() bool { return len(events()) >= 2 })
	evs := events()
	if len(evs) != 2 || evs[0].Type != kassa.TicketCreated || evs[1].Type != kassa.TicketBumped ||
		evs[1].Ticket.KitchenStatus != kassa.KitchenInProgress {
		t.Fatalf("kitchen feed after restart: %+v", evs)
	}
}
