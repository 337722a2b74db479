package hubnode

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
)

// TestReportsRebuildRefillsTheRollupsFromTheRawRows (docs/reports.md,
// "Rollups"): the hub sells; stopped, its rollups are lost (emptied, as a
// store upgraded from a release without them has none); `hub
// reports-rebuild` refills them from the raw orders and refunds, and the
// restarted hub's sales report by day is what it was before.
func TestReportsRebuildRefillsTheRollupsFromTheRawRows(t *testing.T) {
	dir, store := t.TempDir(), pgtest.HubArgs(t)
	p := nodetest.Start(t, Run, nil, append([]string{"--demo", "--http-addr", "127.0.0.1:0", "--data-dir", dir, "--leaf-port", "-1"}, store...)...)
	tok := p.Login(t, "owner@demo.test", demo.Password)
	var locs, products struct{ Data []map[string]any }
	p.Call(t, "GET", "/api/v1/locations", tok, nil, &locs)
	p.Call(t, "GET", "/api/v1/catalog/products?limit=3", tok, nil, &products)
	loc := locs.Data[0]["id"]
	for i, pr := range products.Data {
		var o struct{ Data map[string]any }
		if st := p.Call(t, "POST", "/api/v1/orders", tok, map[string]any{"location_id": loc,
			"line_items": []any{map[string]any{"product_id": pr["id"], "quantity": 1 + i}}}, &o); st != 201 {
			t.Fatalf("order: %d", st)
		}
		id := o.Data["id"].(string)
		p.Call(t, "POST", "/api/v1/payments/initiate", tok, map[string]any{"order_id": id, "amount": o.Data["total"], "method": "cash"}, nil)
		if st := p.Call(t, "POST", "/api/v1/orders/"+id+"/complete", tok, nil, nil); st != 200 {
			t.Fatalf("complete: %d", st)
		}
		if i == 0 {
			p.Call(t, "POST", "/api/v1/orders/"+id+"/refund", tok, map[string]any{"amount": 50, "reason": "test"}, nil)
		}
	}
	now := time.Now().UTC()
	q := fmt.Sprintf("/api/v1/reports/sales?group_by=day&date_from=%s&date_to=%s", now.AddDate(0, 0, -2).Format(time.DateOnly),
		now.AddDate(0, 0, 2).Format(time.DateOnly))
	report := func(p *nodetest.Proc, tok string) string {
		var r struct{ Data []map[string]any }
		if st := p.Call(t, "GET", q, tok, nil, &r); st != 200 {
			t.Fatalf("report: %d", st)
		}
		return fmt.Sprint(r.Data)
	}
	before := report(p, tok)
	if !strings.Contains(before, "orders:3") || !strings.Contains(before, "refunds:50") {
		t.Fatalf("the sales by day before: %s", before)
	}
	p.Stop(t)

	driver, at := "sqlite3", "file:"+filepath.Join(dir, "kassa.db")
	if len(store) > 0 {
		driver, at = "pgx", store[1]
	}
	db, err := sql.Open(driver, at)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM sales_days`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var out bytes.Buffer
	if err := Commands["reports-rebuild"](context.Background(), append([]string{"--data-dir", dir}, store...), func(string) string { return "" }, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "rebuilt the report rollups of 1 locations") {
		t.Errorf("reports-rebuild says %q", out.String())
	}
	p = nodetest.Start(t, Run, nil, append([]string{"--http-addr", "127.0.0.1:0", "--data-dir", dir, "--leaf-port", "-1"}, store...)...)
	if after := report(p, p.Login(t, "owner@demo.test", demo.Password)); after != before {
		t.Fatalf("the sales by day after the rebuild:\n%s\nbefore:\n%s", after, before)
	}
}
