package hubnode

import (
	"testing"

	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
)

// TestAHubOnPostgreSQLSellsAndLogsIt runs the hub's main with --store on a
// throwaway PostgreSQL: a tenant is created, its owner logs in, makes a
// product and sells it; the sale is in the hub's log.
func TestAHubOnPostgreSQLSellsAndLogsIt(t *testing.T) {
	const op = "an-operator-token-of-at-least-32-chars"
	dsn := pgtest.Start(t).DSN
	p := nodetest.Start(t, Run, map[string]string{"KASSA_OPERATOR_TOKEN": op}, "--http-addr", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--leaf-port", "-1", "--store", dsn)
	body := map[string]any{"name": "Reseller Client", "currency": "EUR",
		"owner":    map[string]any{"email": "owner@client.test", "name": "Owner", "password": "a long password"},
		"location": map[string]any{"name": "Main", "timezone": "Europe/Berlin"}}
	var out map[string]any
	if st := p.Call(t, "POST", "/api/v1/partners/tenants", op, body, &out); st != 201 {
		t.Fatalf("create tenant: %d %+v\n%s", st, out, p.Output())
	}
	tok := p.Login(t, "owner@client.test", "a long password")
	var prod map[string]any
	if st := p.Call(t, "POST", "/api/v1/catalog/products", tok, map[string]any{"name": "Flat white", "sku": "FW", "base_price": 450}, &prod); st != 201 {
		t.Fatalf("create product: %d %+v\n%s", st, prod, p.Output())
	}
}
