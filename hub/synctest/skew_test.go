package synctest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// release names an earlier release: its tag, and the commit the tag is on.
// The commit is what the test builds when the tag is not in the clone —
// tags do not travel with main (a landing pushes commits only, and CI's
// clone has none), but the release's commit is in main's history.
type release struct{ tag, commit string }

// previousRelease is the release one before this build: a hub of today
// must keep an edge of it in sync (README, Upgrades). v0.7.0 (session 8,
// change-record format 3) is the last release that landed; v0.8.0 (session
// 9) brings format 4.
var previousRelease = release{tag: "v0.7.0", commit: "5918536cf115a397c9cc14f5ff7f49017e113667"}

// buildRelease builds the edge binary of an earlier release from this
// repository's history (git archive of its tag, or of its commit where the
// tag is absent), as a store that has not upgraded yet runs it. It skips,
// saying why, where the history is not at hand (not a git checkout, or a
// shallow clone without the commit).
func buildRelease(t *testing.T, rel release) string {
	t.Helper()
	tag := rel.tag
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("version skew: not run — this is not a git checkout (%v), and the test builds the %s edge from its commit", err, tag)
	}
	dir := strings.TrimSpace(string(root))
	ref := tag
	if exec.Command("git", "-C", dir, "rev-parse", "--verify", "--quiet", tag+"^{commit}").Run() != nil {
		ref = rel.commit
		if err := exec.Command("git", "-C", dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}").Run(); err != nil {
			t.Skipf("version skew: not run — neither tag %s nor its commit %s is in this clone (shallow? git fetch --unshallow)", tag, ref)
		}
	}
	src := t.TempDir()
	archive := exec.Command("git", "-C", dir, "archive", "--format=tar", ref)
	var tarball bytes.Buffer
	archive.Stdout = &tarball
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v", tag, err)
	}
	untar := exec.Command("tar", "-x", "-C", src)
	untar.Stdin = &tarball
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("untar %s: %v\n%s", tag, err, out)
	}
	bin := filepath.Join(t.TempDir(), "edge-"+tag)
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X kassa.dev/shared/kassa.Version="+tag, "./edge")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(src, "go.work"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the %s edge: %v\n%s", tag, err, out)
	}
	return bin
}

// TestAHubOfTodayKeepsAnEdgeOfThePreviousReleaseInSync runs the edge
// binary of the previous release against a hub of this build: the old edge
// enrols, sells, receives the hub's catalog and campaign changes, verifies
// its digests clean; then the store upgrades in place (today's edge on the
// same data directory) and keeps selling, and no sale is lost or doubled.
func TestAHubOfTodayKeepsAnEdgeOfThePreviousReleaseInSync(t *testing.T) {
	oldBin := buildRelease(t, previousRelease)
	newBin := buildEdge(t)
	hubDir, edgeDir := t.TempDir(), t.TempDir()
	hub := nodetest.Start(t, hubRun, nil, "--demo", "--http-addr", "127.0.0.1:0", "--data-dir", hubDir, "--leaf-port", "-1")
	token, err := os.ReadFile(filepath.Join(hubDir, "demo-edge.token"))
	if err != nil {
		t.Fatal(err)
	}
	edgeArgs := []string{"--http-addr", "127.0.0.1:0", "--data-dir", edgeDir, "--hub-url", hub.URL}
	old := startProcess(t, oldBin, append(edgeArgs, "--enrol-token", strings.TrimSpace(string(token)))...)
	ep := &nodetest.Proc{URL: old.URL}
	mgr := ep.WaitLogin(t, 20*time.Second, "manager@demo.test", demo.Password)
	hubTok := hub.Login(t, "owner@demo.test", demo.Password)

	var locs, products listResp
	ep.Call(t, "GET", "/api/v1/locations", mgr, nil, &locs)
	wait.For(t, 20*time.Second, "the catalog at the old edge", func() bool {
		ep.Call(t, "GET", "/api/v1/catalog/products?limit=100", mgr, nil, &products)
		return len(products.Data) == 15
	})
	loc, product := locs.Data[0]["id"].(string), products.Data[0]["id"].(string)

	sell := func(p *nodetest.Proc, tok string) string {
		t.Helper()
		var o oneResp
		if st := p.Call(t, "POST", "/api/v1/orders", tok, map[string]any{"location_id": loc,
			"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o); st != 201 {
			t.Fatalf("sale: %d %v", st, o)
		}
		id := o.Data["id"].(string)
		if st := p.Call(t, "POST", "/api/v1/payments/initiate", tok, map[string]any{"order_id": id, "amount": o.Data["total"], "method": "cash"}, nil); st != 201 {
			t.Fatalf("pay: %d", st)
		}
		if st := p.Call(t, "POST", "/api/v1/orders/"+id+"/complete", tok, nil, nil); st != 200 {
			t.Fatalf("complete: %d", st)
		}
		return id
	}
	var sales []string
	for range 5 {
		sales = append(sales, sell(ep, mgr))
	}
	atHub := func(id string) bool {
		var o oneResp
		return hub.Call(t, "GET", "/api/v1/orders/"+id, hubTok, nil, &o) == 200 && o.Data["status"] == "completed"
	}
	for _, id := range sales {
		wait.For(t, 30*time.Second, "the old edge's sale at the hub", func() bool { return atHub(id) })
	}
	// A partner's order at the hub, paid there (run at the old edge) and
	// completed there: the old edge does not know order.complete, so the
	// hub completes it itself, as the previous release's hub did.
	var online oneResp
	if st := hub.Call(t, "POST", "/api/v1/orders", hubTok, map[string]any{"location_id": loc, "channel": "online",
		"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &online); st != 201 {
		t.Fatalf("online order at the hub: %d %v", st, online)
	}
	onlineID := online.Data["id"].(string)
	if st := hub.Call(t, "POST", "/api/v1/payments/initiate", hubTok, map[string]any{"order_id": onlineID, "amount": online.Data["total"],
		"method": "cash"}, nil); st != 201 {
		t.Fatalf("pay at the hub: %d", st)
	}
	if st := hub.Call(t, "POST", "/api/v1/orders/"+onlineID+"/complete", hubTok, nil, nil); st != 200 {
		t.Fatalf("complete at the hub of the old edge's order: %d", st)
	}
	sales = append(sales, onlineID)
	wait.For(t, 30*time.Second, "the hub's completion at the old edge", func() bool {
		var o oneResp
		return ep.Call(t, "GET", "/api/v1/orders/"+onlineID, mgr, nil, &o) == 200 && o.Data["status"] == "completed"
	})

	// The hub's changes reach the old edge: a new product, a price, a campaign.
	var np oneResp
	if st := hub.Call(t, "POST", "/api/v1/catalog/products", hubTok, map[string]any{"name": "Skew scone", "sku": "SKEW-1", "base_price": 450}, &np); st != 201 {
		t.Fatalf("product at the hub: %d %v", st, np)
	}
	if st := hub.Call(t, "PATCH", "/api/v1/catalog/products/"+product, hubTok, map[string]any{"base_price": 999}, nil); st != 200 {
		t.Fatalf("price at the hub: %d", st)
	}
	var c oneResp
	if st := hub.Call(t, "POST", "/api/v1/campaigns", hubTok, map[string]any{"name": "Skew ten", "type": "discount",
		"rules": []any{map[string]any{"type": "order_discount", "discount_type": "percent", "value": 1000}}}, &c); st != 201 {
		t.Fatalf("campaign at the hub: %d %v", st, c)
	}
	if st := hub.Call(t, "POST", "/api/v1/campaigns/"+c.Data["id"].(string)+"/launch", hubTok, nil, nil); st != 200 {
		t.Fatalf("launch: %d", st)
	}
	wait.For(t, 30*time.Second, "the hub's catalog and campaign at the old edge", func() bool {
		var p, cl oneResp
		var camps listResp
		ok := ep.Call(t, "GET", "/api/v1/catalog/products/"+np.Data["id"].(string), mgr, nil, &cl) == 200
		ok = ok && ep.Call(t, "GET", "/api/v1/catalog/products/"+product, mgr, nil, &p) == 200 && p.Data["base_price"] == float64(999)
		ep.Call(t, "GET", "/api/v1/campaigns", mgr, nil, &camps)
		return ok && len(camps.Data) == 1 && camps.Data[0]["status"] == "active"
	})
	// Sales with the campaign: every node derives its redemptions from the
	// orders (since format 2; a format-1 edge also pushed redemption
	// records, which the hub drops), so the hub's analytics count them once.
	campaign := c.Data["id"].(string)
	for range 2 {
		sales = append(sales, sell(ep, mgr))
	}
	redemptions := func(p *nodetest.Proc, tok string) float64 {
		var st oneResp
		p.Call(t, "GET", "/api/v1/campaigns/"+campaign+"/analytics", tok, nil, &st)
		n, _ := st.Data["redemptions"].(float64)
		return n
	}
	wait.For(t, 30*time.Second, "the old edge's campaign sales in the hub's analytics", func() bool {
		return atHub(sales[len(sales)-1]) && redemptions(hub, hubTok) == 2
	})
	// Its digests agree with the hub's, and nothing was quarantined at
	// either side.
	wait.For(t, 90*time.Second, "the old edge to verify clean", func() bool {
		var st oneResp
		ep.Call(t, "GET", "/api/v1/sync/status", mgr, nil, &st)
		return st.Data["last_verified"] != nil && st.Data["pending_up"] == float64(0) && st.Data["last_error"] == nil
	})
	noConflicts := func(p *nodetest.Proc, tok, where string) {
		t.Helper()
		var l listResp
		p.Call(t, "GET", "/api/v1/sync/conflicts", tok, nil, &l)
		if len(l.Data) != 0 {
			t.Fatalf("conflicts at the %s: %v", where, l.Data)
		}
	}
	noConflicts(hub, hubTok, "hub")
	noConflicts(ep, mgr, "old edge")

	// The store upgrades in place: today's edge on the same data.
	old.cmd.Process.Signal(os.Interrupt)
	old.cmd.Wait()
	upgraded := startProcess(t, newBin, edgeArgs...)
	ep = &nodetest.Proc{URL: upgraded.URL}
	mgr = ep.WaitLogin(t, 20*time.Second, "manager@demo.test", demo.Password)
	for range 3 {
		sales = append(sales, sell(ep, mgr))
	}
	for _, id := range sales {
		wait.For(t, 30*time.Second, "every sale at the hub after the upgrade", func() bool { return atHub(id) })
		var o oneResp
		if st := ep.Call(t, "GET", "/api/v1/orders/"+id, mgr, nil, &o); st != 200 || o.Data["status"] != "completed" {
			t.Fatalf("sale %s lost at the upgraded edge: %d %v", id, st, o.Data["status"])
		}
	}
	count := func(p *nodetest.Proc, tok string) int {
		var l listResp
		p.Call(t, "GET", "/api/v1/orders?limit=200&location_id="+loc, tok, nil, &l)
		return len(l.Data)
	}
	wait.For(t, 30*time.Second, "the hub to hold exactly the edge's orders", func() bool {
		return count(hub, hubTok) == len(sales) && count(ep, mgr) == len(sales)
	})
	noConflicts(hub, hubTok, "hub after the upgrade")
	// The upgraded edge kept the redemptions the old one recorded
	// (migration 0019) and derives the new sales' own; the hub counts
	// each sale once.
	if h, e := redemptions(hub, hubTok), redemptions(ep, mgr); h != 5 || e != 5 {
		t.Fatalf("campaign redemptions: hub %v, upgraded edge %v, want 5 at both", h, e)
	}
}
