package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
)

// Idempotency-Key on POST (CONTRACT.md): the same key with the same body
// within 24 h replays the first response with Idempotent-Replayed: true;
// the same key with another body is 422; while the first is still running,
// 409. Keys are scoped to the caller (org and user).

const idemProductsPath = "/api/v1/catalog/products"

// idemFingerprint is the request fingerprint the idempotent middleware
// computes: sha256 of "POST <path>\n" and the body bytes, hex.
func idemFingerprint(path string, body []byte) string {
	sum := sha256.New()
	sum.Write([]byte("POST " + path + "\n"))
	sum.Write(body)
	return hex.EncodeToString(sum.Sum(nil))
}

// idemProducts lists the org's products.
func idemProducts(t *testing.T, tn *testNode, token string) []any {
	t.Helper()
	r := tn.Do("GET", idemProductsPath+"?limit=200", token, nil)
	if r.Status != 200 {
		t.Fatalf("list products: %d %s", r.Status, r.Body)
	}
	return r.List()
}

// mustReplay checks that r replays first: same status, byte-identical body,
// same Location and Content-Type, and the Idempotent-Replayed header.
func mustReplay(t *testing.T, first, r *resp) {
	t.Helper()
	if r.Status != first.Status {
		t.Fatalf("replay status %d, want %d: %s", r.Status, first.Status, r.Body)
	}
	if !bytes.Equal(r.Body, first.Body) {
		t.Fatalf("replay body differs:\nfirst  %s\nreplay %s", first.Body, r.Body)
	}
	if got := r.Header.Get("Idempotent-Replayed"); got != "true" {
		t.Fatalf("Idempotent-Replayed %q, want true", got)
	}
	if r.Header.Get("Location") != first.Header.Get("Location") {
		t.Fatalf("replay Location %q, want %q", r.Header.Get("Location"), first.Header.Get("Location"))
	}
	if r.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
		t.Fatalf("replay Content-Type %q, want %q", r.Header.Get("Content-Type"), first.Header.Get("Content-Type"))
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Fatal("replay without X-Request-Id")
	}
}

// mustFresh checks that r was not a replay.
func mustFresh(t *testing.T, r *resp) {
	t.Helper()
	if v := r.Header.Get("Idempotent-Replayed"); v != "" {
		t.Fatalf("a first response carries Idempotent-Replayed: %q", v)
	}
}

func TestIdempotencyKeyReplaysTheFirstResponse(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Idem Cafe")
	body := `{"name":"Flat white","sku":"FW-1","base_price":450}`
	outbox := tn.outboxLen()

	// A request refused before the key is looked at (no valid token) does
	// not claim the key.
	mustProblem(t, tn.Do("POST", idemProductsPath, "not-a-token", body, "Idempotency-Key", "create-fw-1"), 401, "unauthorized")

	first := tn.Do("POST", idemProductsPath, o.Owner, body, "Idempotency-Key", "create-fw-1")
	if first.Status != 201 || first.Header.Get("Location") == "" {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	mustFresh(t, first)
	id, _ := first.Data()["id"].(string)
	if first.Header.Get("Location") != "/api/v1/catalog/products/"+id {
		t.Fatalf("Location %q for id %s", first.Header.Get("Location"), id)
	}
	for i := 0; i < 2; i++ {
		mustReplay(t, first, tn.Do("POST", idemProductsPath, o.Owner, body, "Idempotency-Key", "create-fw-1"))
	}
	if l := idemProducts(t, tn, o.Owner); len(l) != 1 || l[0].(map[string]any)["id"] != id {
		t.Fatalf("products after replays: %v", l)
	}
	if got := tn.outboxLen(); got != outbox+2 {
		t.Fatalf("outbox grew by %d, want 2 (the product and its product.created event)", got-outbox)
	}

	// The same key with another body is 422, and runs nothing.
	other := `{"name":"Flat white","sku":"FW-2","base_price":450}`
	mustProblem(t, tn.Do("POST", idemProductsPath, o.Owner, other, "Idempotency-Key", "create-fw-1"), 422, "validation")
	// So is the same key on another route: the key names one request.
	mustProblem(t, tn.Do("POST", "/api/v1/catalog/categories", o.Owner, `{"name":"Coffee"}`, "Idempotency-Key", "create-fw-1"), 422, "validation")
	if l := idemProducts(t, tn, o.Owner); len(l) != 1 {
		t.Fatalf("products after a refused key: %d", len(l))
	}
	if got := tn.outboxLen(); got != outbox+2 {
		t.Fatalf("outbox grew by %d after a refused key, want 2 (the product and its event)", got-outbox)
	}

	// Keys are scoped to the caller: another org's owner, and another user
	// of the same org, use the same key for their own requests.
	o2 := tn.MustOrg("Idem Bistro")
	r := tn.Do("POST", idemProductsPath, o2.Owner, body, "Idempotency-Key", "create-fw-1")
	if r.Status != 201 || r.Data()["id"] == id || r.Data()["org_id"] != o2.ID {
		t.Fatalf("another org, same key: %d %s", r.Status, r.Body)
	}
	mustFresh(t, r)
	manager := tn.MustUser(o, "manager@idem.test", kassa.RoleManager)
	r = tn.Do("POST", idemProductsPath, manager, other, "Idempotency-Key", "create-fw-1")
	if r.Status != 201 || r.Data()["sku"] != "FW-2" {
		t.Fatalf("another user of the org, same key: %d %s", r.Status, r.Body)
	}
	mustFresh(t, r)
	if l := idemProducts(t, tn, o.Owner); len(l) != 2 {
		t.Fatalf("org 1 products: %d, want 2", len(l))
	}
	if l := idemProducts(t, tn, o2.Owner); len(l) != 1 {
		t.Fatalf("org 2 products: %d, want 1", len(l))
	}
	// The first owner's key still replays its own response.
	mustReplay(t, first, tn.Do("POST", idemProductsPath, o.Owner, body, "Idempotency-Key", "create-fw-1"))
}

func TestIdempotencyReplaysClientErrors(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Idem Errors Cafe")
	if r := tn.Do("POST", idemProductsPath, o.Owner, `{"name":"Flat white","sku":"FW-1","base_price":450}`); r.Status != 201 {
		t.Fatalf("setup: %d %s", r.Status, r.Body)
	}
	outbox := tn.outboxLen()

	// A first request that failed validation replays its 422, byte for byte
	// (the request id in the body is the first request's: nothing ran again).
	invalid := `{"name":"No price","sku":"NP-1"}`
	first := tn.Do("POST", idemProductsPath, o.Owner, invalid, "Idempotency-Key", "invalid-1")
	mustProblem(t, first, 422, "validation")
	mustFresh(t, first)
	replay := tn.Do("POST", idemProductsPath, o.Owner, invalid, "Idempotency-Key", "invalid-1")
	mustReplay(t, first, replay)
	if replay.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("replayed problem content type %q", replay.Header.Get("Content-Type"))
	}

	// A first request that hit a duplicate sku replays its 409.
	dup := `{"name":"Another flat white","sku":"FW-1","base_price":500}`
	first = tn.Do("POST", idemProductsPath, o.Owner, dup, "Idempotency-Key", "dup-1")
	mustProblem(t, first, 409, "conflict")
	mustFresh(t, first)
	mustReplay(t, first, tn.Do("POST", idemProductsPath, o.Owner, dup, "Idempotency-Key", "dup-1"))

	// A malformed body is refused with 400 and replayed too.
	first = tn.Do("POST", idemProductsPath, o.Owner, `{"name":`, "Idempotency-Key", "malformed-1")
	mustProblem(t, first, 400, "bad-request")
	mustReplay(t, first, tn.Do("POST", idemProductsPath, o.Owner, `{"name":`, "Idempotency-Key", "malformed-1"))

	if got := tn.outboxLen(); got != outbox {
		t.Fatalf("refused requests wrote %d change records", got-outbox)
	}
	if l := idemProducts(t, tn, o.Owner); len(l) != 1 {
		t.Fatalf("products: %d, want 1", len(l))
	}
}

func TestIdempotencyWindowIs24Hours(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Idem Window Cafe")
	a := `{"name":"Flat white","sku":"FW-1","base_price":450}`
	b := `{"name":"Long black","sku":"LB-1","base_price":400}`
	first := tn.Do("POST", idemProductsPath, o.Owner, a, "Idempotency-Key", "window-1")
	if first.Status != 201 {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}

	// Within the window the key replays, and another body is refused. Access
	// tokens live 15 minutes: log in again after moving the clock.
	tn.Clock.Advance(23 * time.Hour)
	owner := tn.MustLogin(o.OwnerEmail, testPassword)["accessToken"].(string)
	mustReplay(t, first, tn.Do("POST", idemProductsPath, owner, a, "Idempotency-Key", "window-1"))
	mustProblem(t, tn.Do("POST", idemProductsPath, owner, b, "Idempotency-Key", "window-1"), 422, "validation")

	// After 24 h the key is free: another body runs anew.
	tn.Clock.Advance(2 * time.Hour)
	owner = tn.MustLogin(o.OwnerEmail, testPassword)["accessToken"].(string)
	outbox := tn.outboxLen()
	second := tn.Do("POST", idemProductsPath, owner, b, "Idempotency-Key", "window-1")
	if second.Status != 201 || second.Data()["sku"] != "LB-1" {
		t.Fatalf("after 25 h: %d %s", second.Status, second.Body)
	}
	mustFresh(t, second)
	if got := tn.outboxLen(); got != outbox+2 {
		t.Fatalf("outbox grew by %d, want 2 (the product and its product.created event)", got-outbox)
	}
	// And the key now replays the new response.
	mustReplay(t, second, tn.Do("POST", idemProductsPath, owner, b, "Idempotency-Key", "window-1"))
	if l := idemProducts(t, tn, owner); len(l) != 2 {
		t.Fatalf("products: %d, want 2", len(l))
	}
}

func TestIdempotencyKeyForm(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Idem Key Cafe")
	outbox := tn.outboxLen()
	for name, key := range map[string]string{
		"256 characters":  strings.Repeat("k", 256),
		"1000 characters": strings.Repeat("k", 1000),
		"an inner space":  "two words",
	} {
		t.Run(name, func(t *testing.T) {
			r := tn.Do("POST", idemProductsPath, o.Owner, `{"name":"Flat white","sku":"FW-1","base_price":450}`, "Idempotency-Key", key)
			mustProblem(t, r, 400, "bad-request")
		})
	}
	if got := tn.outboxLen(); got != outbox {
		t.Fatalf("refused keys wrote %d change records", got-outbox)
	}
	if l := idemProducts(t, tn, o.Owner); len(l) != 0 {
		t.Fatalf("refused keys created %d products", len(l))
	}
	// Keys of up to 255 visible characters are fine (the OpenAPI document
	// says maxLength 255), a UUID being the usual one.
	for i, key := range []string{"0190a0a0-0000-7000-8000-000000000001", "k", strings.Repeat("k", 128),
		strings.Repeat("k", 129), strings.Repeat("k", 255), `!"#$%&'()*+,-./:;<=>?@[\]^_{|}~`} {
		t.Run(fmt.Sprintf("key of %d characters", len(key)), func(t *testing.T) {
			body := `{"name":"Flat white","sku":"FW-` + string(rune('a'+i)) + `","base_price":450}`
			first := tn.Do("POST", idemProductsPath, o.Owner, body, "Idempotency-Key", key)
			if first.Status != 201 {
				t.Fatalf("key of %d characters: %d %s", len(key), first.Status, first.Body)
			}
			mustReplay(t, first, tn.Do("POST", idemProductsPath, o.Owner, body, "Idempotency-Key", key))
		})
	}
}

func TestIdempotencyWhileTheFirstIsRunning(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Idem Running Cafe")
	store := tn.N.Services.Idempotency
	ctx := context.Background()

	// The store: a claimed key that has not completed is a conflict for the
	// same request, and a validation error for another.
	if _, r, err := store.Begin(ctx, "scope-a", "k1", "fp-1"); r != nil || err != nil {
		t.Fatalf("first Begin: %v %v", r, err)
	}
	_, r, err := store.Begin(ctx, "scope-a", "k1", "fp-1")
	if r != nil || kassa.ErrorKind(err) != kassa.EConflict {
		t.Fatalf("second Begin: %v, %v (kind %s), want a conflict", r, err, kassa.ErrorKind(err))
	}
	if _, _, err := store.Begin(ctx, "scope-a", "k1", "fp-2"); kassa.ErrorKind(err) != kassa.EInvalid {
		t.Fatalf("Begin with another fingerprint: %v, want validation", err)
	}
	// Another scope is another key.
	if _, r, err := store.Begin(ctx, "scope-b", "k1", "fp-1"); r != nil || err != nil {
		t.Fatalf("Begin in another scope: %v %v", r, err)
	}
	// Complete stores the response; Begin then returns it.
	want := &kassa.IdempotentResponse{Status: 201, ContentType: "application/json", Location: "/x", Body: []byte(`{"data":{}}`)}
	if err := store.Complete(ctx, "scope-a", "k1", want); err != nil {
		t.Fatal(err)
	}
	_, r, err = store.Begin(ctx, "scope-a", "k1", "fp-1")
	if err != nil || r == nil || r.Status != 201 || r.ContentType != want.ContentType || r.Location != "/x" || !bytes.Equal(r.Body, want.Body) {
		t.Fatalf("Begin after Complete: %+v %v", r, err)
	}
	// Abandon releases a running key, so that a retry runs again.
	if err := store.Abandon(ctx, "scope-b", "k1"); err != nil {
		t.Fatal(err)
	}
	if _, r, err := store.Begin(ctx, "scope-b", "k1", "fp-1"); r != nil || err != nil {
		t.Fatalf("Begin after Abandon: %v %v", r, err)
	}

	// Over HTTP: claim the key exactly as the middleware would for the
	// owner's request, then send that request: 409 while it "runs".
	me := tn.Do("GET", "/api/v1/auth/me", o.Owner, nil)
	userID, _ := me.Data()["id"].(string)
	if me.Status != 200 || userID == "" {
		t.Fatalf("me: %d %s", me.Status, me.Body)
	}
	scope := o.ID + "/" + userID
	body := `{"name":"Slow brew","sku":"SB-1","base_price":900}`
	if _, r, err := store.Begin(ctx, scope, "running-1", idemFingerprint(idemProductsPath, []byte(body))); r != nil || err != nil {
		t.Fatalf("claim: %v %v", r, err)
	}
	outbox := tn.outboxLen()
	for i := 0; i < 2; i++ {
		r := tn.Do("POST", idemProductsPath, o.Owner, body, "Idempotency-Key", "running-1")
		mustProblem(t, r, 409, "conflict")
		mustFresh(t, r)
	}
	// Another body with the key is still 422, running or not.
	mustProblem(t, tn.Do("POST", idemProductsPath, o.Owner, `{"name":"Other","sku":"OT-1","base_price":1}`, "Idempotency-Key", "running-1"), 422, "validation")
	if got := tn.outboxLen(); got != outbox {
		t.Fatalf("requests refused while the first runs wrote %d change records", got-outbox)
	}
	if l := idemProducts(t, tn, o.Owner); len(l) != 0 {
		t.Fatalf("products: %d, want 0", len(l))
	}
	// Once the first gives up (a server error abandons the key), a retry runs.
	if err := store.Abandon(ctx, scope, "running-1"); err != nil {
		t.Fatal(err)
	}
	first := tn.Do("POST", idemProductsPath, o.Owner, body, "Idempotency-Key", "running-1")
	if first.Status != 201 {
		t.Fatalf("after the first gave up: %d %s", first.Status, first.Body)
	}
	mustFresh(t, first)
	mustReplay(t, first, tn.Do("POST", idemProductsPath, o.Owner, body, "Idempotency-Key", "running-1"))
}

// Idempotency-Key applies to every authenticated POST: a repeated location
// or staff account is replayed, not created twice (or refused as a duplicate).
func TestIdempotencyOnOtherPosts(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Idem Other Cafe")
	outbox := tn.outboxLen()
	for _, c := range []struct{ path, body string }{
		{"/api/v1/locations", `{"name":"Main St","timezone":"Australia/Sydney"}`},
		{"/api/v1/users", `{"email":"cashier@idem.test","name":"Cash","role":"cashier","password":"correct horse battery"}`},
		{"/api/v1/catalog/categories", `{"name":"Coffee"}`},
		{"/api/v1/catalog/modifiers/groups", `{"name":"Milk","options":[{"name":"Oat","price_adjustment":50}]}`},
		{"/api/v1/catalog/price-lists", `{"name":"Happy hour"}`},
	} {
		first := tn.Do("POST", c.path, o.Owner, c.body, "Idempotency-Key", "other-"+c.path)
		if first.Status != 201 || !strings.HasPrefix(first.Header.Get("Location"), c.path+"/") {
			t.Fatalf("POST %s: %d %s (Location %q)", c.path, first.Status, first.Body, first.Header.Get("Location"))
		}
		mustReplay(t, first, tn.Do("POST", c.path, o.Owner, c.body, "Idempotency-Key", "other-"+c.path))
	}
	if got := tn.outboxLen(); got != outbox+5 {
		t.Fatalf("outbox grew by %d, want 5", got-outbox)
	}
	if r := tn.Do("GET", "/api/v1/locations", o.Owner, nil); len(r.List()) != 1 {
		t.Fatalf("locations: %s", r.Body)
	}
}

// flakyProducts fails the first CreateProduct calls: by panicking, or by
// returning an unexpected (non-kassa) error; later calls go through.
type flakyProducts struct {
	kassa.ProductService
	mu       sync.Mutex
	failures int
	panics   bool
}

func (f *flakyProducts) CreateProduct(ctx context.Context, in *kassa.ProductCreate) (*kassa.Product, error) {
	f.mu.Lock()
	fail := f.failures > 0
	if fail {
		f.failures--
	}
	f.mu.Unlock()
	if fail && f.panics {
		panic("flaky product store")
	}
	if fail {
		return nil, errors.New("flaky product store")
	}
	return f.ProductService.CreateProduct(ctx, in)
}

// startFlakyAPI serves the node's services, with products replaced by
// flaky ones, from a second HTTP server over the same store.
func startFlakyAPI(t *testing.T, tn *testNode, products kassa.ProductService) *testNode {
	t.Helper()
	svc := tn.N.Services
	svc.Products = products
	s := httpapi.New(httpapi.Config{Node: kassa.NodeEdge, NodeID: tn.N.NodeID(), ErrorsBase: "https://kassa.test/problems",
		BodyLimit: 64 << 10, Now: tn.Clock.Now}, svc, slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return &testNode{t: t, URL: "http://" + ln.Addr().String(), N: tn.N, Clock: tn.Clock}
}

// A first request that ends in a server error keeps no response: the retry
// with the same key runs again (middleware.go: "Responses of 5xx are not
// kept"), whether the error was returned or the handler panicked.
func TestIdempotencyRetryAfterServerErrorRunsAgain(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Idem Flaky Cafe")
	for _, panics := range []bool{false, true} {
		name := map[bool]string{false: "error", true: "panic"}[panics]
		t.Run(name, func(t *testing.T) {
			api := startFlakyAPI(t, tn, &flakyProducts{ProductService: tn.N.Services.Products, failures: 1, panics: panics})
			body := `{"name":"Flaky","sku":"FL-` + name + `","base_price":100}`
			key := "flaky-" + name
			mustProblem(t, api.Do("POST", idemProductsPath, o.Owner, body, "Idempotency-Key", key), 500, "internal")
			retry := api.Do("POST", idemProductsPath, o.Owner, body, "Idempotency-Key", key)
			if retry.Status != 201 {
				t.Fatalf("retry after a server error (%s): %d %s, want 201 (the key must be released)", name, retry.Status, retry.Body)
			}
			mustFresh(t, retry)
			mustReplay(t, retry, api.Do("POST", idemProductsPath, o.Owner, body, "Idempotency-Key", key))
		})
	}
}

// Concurrent requests with one key run once: one creates, the others are
// replays or 409 (still running), and exactly one product exists.
func TestIdempotencyConcurrentDuplicatesRunOnce(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Idem Race Cafe")
	body := `{"name":"Race","sku":"RACE-1","base_price":100}`
	outbox := tn.outboxLen()
	const n = 12
	type result struct {
		status   int
		replayed string
		body     []byte
		err      error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequest("POST", tn.URL+idemProductsPath, strings.NewReader(body))
			if err != nil {
				results[i].err = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+o.Owner)
			req.Header.Set("Idempotency-Key", "race-1")
			<-start
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			results[i] = result{status: res.StatusCode, replayed: res.Header.Get("Idempotent-Replayed"), body: b}
		}()
	}
	close(start)
	wg.Wait()
	fresh := 0
	var created []byte
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Fatalf("request %d: %v", i, r.err)
		case r.status == 201 && r.replayed == "":
			fresh++
			created = r.body
		case r.status == 201 && r.replayed == "true":
		case r.status == 409:
		default:
			t.Fatalf("request %d: %d (replayed %q) %s", i, r.status, r.replayed, r.body)
		}
	}
	if fresh != 1 {
		t.Fatalf("%d requests created, want exactly 1", fresh)
	}
	for i, r := range results {
		if r.status == 201 && !bytes.Equal(r.body, created) {
			t.Fatalf("request %d answered another body: %s", i, r.body)
		}
	}
	if l := idemProducts(t, tn, o.Owner); len(l) != 1 {
		t.Fatalf("products: %d, want 1", len(l))
	}
	if got := tn.outboxLen(); got != outbox+2 {
		t.Fatalf("outbox grew by %d, want 2 (the product and its product.created event)", got-outbox)
	}
}
