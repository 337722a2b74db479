package kassaclient_test

import (
	"context"
	"net/http"
	"os"
	"testing"

	"github.com/google/uuid"

	"kassa.dev/clienttest/kassaclient"
	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
)

// TestGeneratedClientDrivesAHub is what a partner does first with a client
// generated from the document: log in, create a product and an order, read
// them back, and read a problem as a typed value. Real hub binary, real
// HTTP on loopback.
func TestGeneratedClientDrivesAHub(t *testing.T) {
	ctx, c, loc := signedInOwner(t)

	price := int64(560)
	key := "smoke-product"
	created, err := c.PostCatalogProductsWithResponse(ctx, &kassaclient.PostCatalogProductsParams{IdempotencyKey: &key},
		kassaclient.ProductCreate{Name: "Matcha Latte", Sku: "TEA-MAT", BasePrice: &price})
	if err != nil || created.JSON201 == nil {
		t.Fatalf("create product: %v %d %s", err, created.StatusCode(), body(created.Body))
	}
	prod := created.JSON201.Data
	if prod.Name != "Matcha Latte" || prod.BasePrice != price || !prod.IsActive {
		t.Errorf("created product %+v", prod)
	}
	got, err := c.GetCatalogProductsIdWithResponse(ctx, uuid.MustParse(prod.Id))
	if err != nil || got.JSON200 == nil || got.JSON200.Data.Sku != "TEA-MAT" {
		t.Fatalf("read product: %v %s", err, body(got.Body))
	}

	order, err := c.PostOrdersWithResponse(ctx, nil, kassaclient.OrderCreate{LocationId: loc.Id,
		LineItems: []kassaclient.OrderLineInput{{ProductId: prod.Id, Quantity: 2}}})
	if err != nil || order.JSON201 == nil {
		t.Fatalf("create order: %v %d %s", err, order.StatusCode(), body(order.Body))
	}
	o := order.JSON201.Data
	if o.Status != kassaclient.OrderStatusOpen || len(o.LineItems) != 1 || o.LineItems[0].UnitPrice != price ||
		o.LineItems[0].Quantity != 2 || o.Total < 2*price || o.Currency != loc.Currency {
		t.Errorf("created order %+v", o)
	}
	back, err := c.GetOrdersIdWithResponse(ctx, uuid.MustParse(o.Id))
	if err != nil || back.JSON200 == nil {
		t.Fatalf("read order: %v %s", err, body(back.Body))
	}
	if b := back.JSON200.Data; b.Number != o.Number || b.Total != o.Total || b.LineItems[0].ProductId != prod.Id {
		t.Errorf("read back %+v, created %+v", b, o)
	}

	missing, err := c.GetOrdersIdWithResponse(ctx, uuid.New())
	if err != nil || missing.ApplicationproblemJSON404 == nil || missing.ApplicationproblemJSON404.Status != 404 {
		t.Fatalf("unknown order: %v %d %s", err, missing.StatusCode(), body(missing.Body))
	}
}

// TestMain runs the package's tests and then stops its throwaway
// PostgreSQL, if KASSA_TEST_STORE=postgres started one (pgtest.HubArgs).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func body(b []byte) string { return string(b) }

// signedInOwner starts the real hub binary with the demo org and gives a
// generated client signed in as its owner, and the org's first location:
// what every test of the client begins with.
func signedInOwner(t *testing.T) (context.Context, *kassaclient.ClientWithResponses, kassaclient.Location) {
	t.Helper()
	p := nodetest.Start(t, hubnode.Run, nil, append([]string{"--http-addr", "127.0.0.1:0", "--leaf-port", "-1", "--data-dir", t.TempDir(), "--demo"},
		pgtest.HubArgs(t)...)...)
	ctx := context.Background()
	anon, err := kassaclient.NewClientWithResponses(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	login, err := anon.PostAuthLoginWithResponse(ctx, kassaclient.LoginRequest{Email: "owner@demo.test", Password: "kassa-demo"})
	if err != nil || login.JSON200 == nil {
		t.Fatalf("login: %v %s", err, body(login.Body))
	}
	token := login.JSON200.Data.AccessToken
	c, err := kassaclient.NewClientWithResponses(p.URL, kassaclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	locs, err := c.GetLocationsWithResponse(ctx, nil)
	if err != nil || locs.JSON200 == nil || len(locs.JSON200.Data) == 0 {
		t.Fatalf("locations: %v %s", err, body(locs.Body))
	}
	return ctx, c, locs.JSON200.Data[0]
}
