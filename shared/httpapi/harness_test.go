package httpapi_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/node/hubonly"
	"kassa.dev/shared/pgtest"
	"kassa.dev/sync/change"
)

// fakeClock is the wall clock of a test node; tests move it forward.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestMain runs the suite and then stops the package's throwaway
// PostgreSQL, if KASSA_TEST_STORE=postgres started one.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// testNode is a real node: a SQLite file in a temp dir (a hub's, with
// KASSA_TEST_STORE=postgres, a fresh database of the package's throwaway
// PostgreSQL: pgtest.HubStore) and the real Fiber app served on a
// loopback port.
type testNode struct {
	t     testing.TB
	URL   string
	N     *node.Node
	Clock *fakeClock
}

// MustStartNode starts a node of the given kind; tweak may change its config.
func MustStartNode(t testing.TB, kind string, tweak func(*node.Config)) *testNode {
	t.Helper()
	return MustStartNodeLog(t, kind, tweak, slog.New(slog.DiscardHandler))
}

// MustStartNodeLog is MustStartNode with the node logging to log.
func MustStartNodeLog(t testing.TB, kind string, tweak func(*node.Config), log *slog.Logger) *testNode {
	t.Helper()
	onlyWithAHub(t, kind)
	clock := &fakeClock{t: time.Now().UTC()}
	cfg := node.Config{Kind: kind, DataDir: t.TempDir(),
		Config:         httpapi.Config{ErrorsBase: "https://kassa.test/problems", BodyLimit: 64 << 10, Now: clock.Now},
		LoginPerMinute: 600, LoginBurst: 600, LoginIPPerMinute: 6000, LoginIPBurst: 6000}
	if kind == kassa.NodeHub { // the hub's own part, as its main adds it
		cfg.Parts = []node.Part{hubonly.New()}
	}
	if tweak != nil {
		tweak(&cfg)
	}
	if kind == kassa.NodeHub && cfg.Store == "" {
		cfg.Store = hubStore(t, cfg.DataDir)
	}
	n, err := node.Open(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go n.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n.Shutdown(ctx)
	})
	return &testNode{t: t, URL: "http://" + ln.Addr().String(), N: n, Clock: clock}
}

// hubsStarted are the names of the tests that started a hub.
var hubsStarted sync.Map

// onlyWithAHub is the rule of the suite's run on PostgreSQL
// (docs/postgres.md, "The API suite on PostgreSQL"): a test, or a
// subtest, whose first node is an edge and none of whose parents started
// a hub is skipped there, its run on SQLite covering it (an edge's store
// is SQLite on either run). A test that needs both starts its hub first.
func onlyWithAHub(t testing.TB, kind string) {
	t.Helper()
	if !pgtest.OnPostgres() {
		return
	}
	if kind == kassa.NodeHub {
		hubsStarted.Store(t.Name(), true)
		return
	}
	for name := t.Name(); ; name = name[:strings.LastIndexByte(name, '/')] {
		if _, ok := hubsStarted.Load(name); ok {
			return
		}
		if !strings.Contains(name, "/") {
			break
		}
	}
	t.Skip("an edge's test: the run on SQLite covers it (KASSA_TEST_STORE=postgres runs the tests that start a hub)")
}

// hubStores are the PostgreSQL databases of the hubs' data folders: a
// test that restarts its hub on the same folder gets the same database.
var hubStores sync.Map

// hubStore is the store of a hub on dataDir: "" (the SQLite file there)
// unless KASSA_TEST_STORE=postgres, then the folder's database.
func hubStore(t testing.TB, dataDir string) string {
	if !pgtest.OnPostgres() {
		return ""
	}
	if dsn, ok := hubStores.Load(dataDir); ok {
		return dsn.(string)
	}
	dsn := pgtest.HubStore(t)
	hubStores.Store(dataDir, dsn)
	return dsn
}

// StoreDB opens the node's store beside it, for a test that reads what
// the API does not show: the SQLite file, or the hub's PostgreSQL
// database (its driver takes the same ? placeholders). Closed when the
// test ends.
func (tn *testNode) StoreDB() *sql.DB {
	tn.t.Helper()
	driver, name := "sqlite3", "file:"+filepath.Join(tn.N.Config.DataDir, "kassa.db")+"?_busy_timeout=10000"
	if tn.N.Config.Store != "" {
		driver, name = hubonly.PostgresDriver, tn.N.Config.Store
	}
	db, err := sql.Open(driver, name)
	if err != nil {
		tn.t.Fatal(err)
	}
	tn.t.Cleanup(func() { db.Close() })
	return db
}

// Hub is the hub's own part of the node (nil at an edge).
func (tn *testNode) Hub() *hubonly.Hub { return hubonly.Of(&tn.N.Config) }

// resp is a decoded HTTP response.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r *resp) JSON() map[string]any {
	var m map[string]any
	json.Unmarshal(r.Body, &m)
	return m
}

// Data returns the "data" object of an envelope.
func (r *resp) Data() map[string]any {
	d, _ := r.JSON()["data"].(map[string]any)
	return d
}

// List returns the "data" array of a list envelope.
func (r *resp) List() []any {
	d, _ := r.JSON()["data"].([]any)
	return d
}

// Do sends a request; body may be nil, a string (sent raw) or a value (sent as JSON).
func (tn *testNode) Do(method, path, token string, body any, headers ...string) *resp {
	tn.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			tn.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, tn.URL+path, rd)
	if err != nil {
		tn.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tn.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// testOrg is an org provisioned on a node, with a logged-in owner.
type testOrg struct {
	ID, OwnerEmail, Owner string // Owner is the owner's access token
}

const testPassword = "correct horse battery"

// MustOrg provisions an org with an owner and logs the owner in.
func (tn *testNode) MustOrg(name string) *testOrg {
	tn.t.Helper()
	email := strings.ToLower(strings.ReplaceAll(name, " ", "")) + "@owner.test"
	org, _, err := tn.N.Orgs.CreateOrg(context.Background(), &kassa.OrgCreate{
		Name: name, Currency: "AUD", OwnerEmail: email, OwnerName: name + " owner", OwnerPassword: testPassword})
	if err != nil {
		tn.t.Fatal(err)
	}
	return &testOrg{ID: org.ID, OwnerEmail: email, Owner: tn.MustLogin(email, testPassword)["accessToken"].(string)}
}

// MustUser adds a staff user with the owner's token and returns its access token.
func (tn *testNode) MustUser(o *testOrg, email string, role kassa.Role) string {
	tn.t.Helper()
	r := tn.Do("POST", "/api/v1/users", o.Owner, map[string]any{"email": email, "role": role, "password": testPassword, "name": string(role)})
	if r.Status != 201 {
		tn.t.Fatalf("create user: %d %s", r.Status, r.Body)
	}
	return tn.MustLogin(email, testPassword)["accessToken"].(string)
}

// MustLogin logs in and returns the login result's data.
func (tn *testNode) MustLogin(email, password string) map[string]any {
	tn.t.Helper()
	r := tn.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": email, "password": password})
	if r.Status != 200 {
		tn.t.Fatalf("login %s: %d %s", email, r.Status, r.Body)
	}
	return r.Data()
}

// changes returns the outbox records of one row.
func (tn *testNode) changes(entity, id string) []change.Change {
	tn.t.Helper()
	cs, err := tn.N.Changes(context.Background(), entity, id)
	if err != nil {
		tn.t.Fatal(err)
	}
	return cs
}

// outboxLen counts all change records.
func (tn *testNode) outboxLen() int {
	tn.t.Helper()
	n, err := tn.N.OutboxLen(context.Background())
	if err != nil {
		tn.t.Fatal(err)
	}
	return n
}

// mustProblem checks that r is a problem document of the given status and kind.
func mustProblem(t testing.TB, r *resp, status int, kind string) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q, want application/problem+json", ct)
	}
	p := r.JSON()
	if p["type"] != "https://kassa.test/problems/"+kind || p["status"] != float64(status) || p["title"] == "" ||
		p["instance"] == "" || p["request_id"] != r.Header.Get("X-Request-Id") || p["detail"] == "" {
		t.Fatalf("problem body %s, want kind %s", r.Body, kind)
	}
	return p
}
