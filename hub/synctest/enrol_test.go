package synctest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"kassa.dev/edge/edgenode"
	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/tlstest"
	"kassa.dev/sync/wait"
)

// TestEnrolmentCannotRebindANode: node ids are minted by the hub; a claim
// naming an enrolled edge's id is refused and spends nothing, a claim
// gets a new id, a store that ran standalone cannot enrol, and the
// enrolled edge keeps syncing. /healthz shows no id.
func TestEnrolmentCannotRebindANode(t *testing.T) {
	e := MustStartPair(t)
	m := regexp.MustCompile(`kassa edge (\S+) serving`).FindStringSubmatch(e.edge.Output())
	if m == nil {
		t.Fatalf("no node id in the edge's output:\n%s", e.edge.Output())
	}
	nodeID := m[1]
	st := e.status(t, e.hub, e.hubTok)
	edges, _ := st["edges"].([]any)
	if len(edges) != 1 || edges[0].(map[string]any)["node_id"] != nodeID {
		t.Fatalf("the hub's edges %v; want the edge's own id %s", edges, nodeID)
	}
	for _, p := range []*nodetest.Proc{e.hub, e.edge} {
		res, err := http.Get(p.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(b), nodeID) || strings.Contains(string(b), "node_id") {
			t.Fatalf("/healthz reveals a node id: %s", b)
		}
	}
	var en oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/locations/"+e.location+"/enrolment", e.hubTok, nil, &en); st != 201 {
		t.Fatalf("enrolment: %d", st)
	}
	tok := en.Data["token"].(string)
	var res oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/sync/enrol", "", map[string]any{"token": tok, "node_id": nodeID}, &res); st < 400 || st >= 500 {
		t.Fatalf("a claim naming the enrolled edge's id: %d %v", st, res.Data)
	}
	if st := e.hub.Call(t, "POST", "/api/v1/sync/enrol", "", map[string]any{"token": tok}, &res); st != 200 {
		t.Fatalf("claim: %d", st)
	}
	if id, _ := res.Data["node_id"].(string); id == "" || id == nodeID || res.Data["leaf_user"] != id {
		t.Fatalf("claim result %v; want a new node id", res.Data)
	}
	// A store that ran standalone has changes under its own id: it refuses
	// to enrol, before spending the token.
	if st := e.hub.Call(t, "POST", "/api/v1/locations/"+e.location+"/enrolment", e.hubTok, nil, &en); st != 201 {
		t.Fatalf("enrolment: %d", st)
	}
	standalone := t.TempDir()
	nodetest.Start(t, edgenode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", standalone, "--demo").Stop(t)
	err := edgenode.Run(t.Context(), []string{"--http-addr", "127.0.0.1:0", "--data-dir", standalone, "--hub-url", e.hub.URL,
		"--enrol-token", en.Data["token"].(string)}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "standalone") {
		t.Fatalf("a standalone store enrolling: %v", err)
	}
	if st := e.hub.Call(t, "POST", "/api/v1/sync/enrol", "", map[string]any{"token": en.Data["token"]}, nil); st != 200 {
		t.Fatalf("the token after the refused enrolment: %d", st)
	}
	// The enrolled edge keeps its link: a sale still reaches the hub.
	product := e.products(t, e.edge, e.edgeTok)[0]["id"].(string)
	id := e.sale(t, product)
	wait.For(t, 20*time.Second, "the edge's sale at the hub after the claim", func() bool {
		return e.hub.Call(t, "GET", "/api/v1/orders/"+id, e.hubTok, nil, nil) == 200
	})
}

// TestPairOverTLS: a hub with a certificate serves HTTPS and a TLS-only
// leaf listener; an edge trusting the CA enrols over HTTPS, syncs over the
// TLS leaf link and serves HTTPS itself; a plain-text leaf connection gets
// no session.
func TestPairOverTLS(t *testing.T) {
	certs := tlstest.New(t)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: certs.Client()}}
	tlsArgs := []string{"--tls-cert", certs.CertFile, "--tls-key", certs.KeyFile, "--tls-ca", certs.CAFile}
	hubDir := t.TempDir()
	hub := nodetest.Start(t, hubnode.Run, nil, append([]string{"--demo", "--http-addr", "127.0.0.1:0", "--data-dir", hubDir,
		"--leaf-port", "-1"}, tlsArgs...)...)
	hub.Client = client
	if !strings.HasPrefix(hub.URL, "https://") {
		t.Fatalf("hub serves %s", hub.URL)
	}
	if _, err := http.Get("http://" + strings.TrimPrefix(hub.URL, "https://") + "/healthz"); err == nil {
		// A plain request to a TLS port gets no API answer; any error is fine.
		t.Log("plain HTTP to the HTTPS port got an answer")
	}
	leaf := strings.TrimPrefix(field(hub.Output(), "leaf "), "nats-leaf://")
	c, err := net.Dial("tcp", leaf)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	if info, err := r.ReadString('\n'); err != nil || !strings.Contains(info, `"tls_required":true`) {
		t.Fatalf("leaf INFO %q %v", info, err)
	}
	c.Write([]byte("CONNECT {\"user\":\"x\",\"pass\":\"y\"}\r\nPING\r\n"))
	if b, _ := io.ReadAll(r); strings.Contains(string(b), "PONG") {
		t.Fatalf("a plain-text leaf connection was served: %q", b)
	}
	c.Close()

	token, err := os.ReadFile(filepath.Join(hubDir, hubnode.DemoTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	edge := nodetest.Start(t, edgenode.Run, nil, append([]string{"--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--hub-url", hub.URL, "--enrol-token", strings.TrimSpace(string(token))}, tlsArgs...)...)
	edge.Client = client
	if !strings.HasPrefix(edge.URL, "https://") {
		t.Fatalf("edge serves %s", edge.URL)
	}
	tok := edge.WaitLogin(t, 20*time.Second, "cashier@demo.test", demo.Password)
	var p oneResp
	if st := edge.Call(t, "POST", "/api/v1/customers", tok, map[string]any{"first_name": "Tls", "last_name": "Check"}, &p); st != 201 {
		t.Fatalf("customer at the edge: %d", st)
	}
	hubTok := hub.Login(t, "owner@demo.test", demo.Password)
	wait.For(t, 20*time.Second, "the edge's customer at the hub", func() bool {
		return hub.Call(t, "GET", "/api/v1/customers/"+p.Data["id"].(string), hubTok, nil, nil) == 200
	})
}

// TestARevokedEdgeIsCutOffAndStaysOut: an owner revokes an edge; its live
// link is cut at once, it cannot connect again, its changes stay in its
// outbox, and the hub no longer lists it. Revoking is for owners only and
// idempotent.
func TestARevokedEdgeIsCutOffAndStaysOut(t *testing.T) {
	e := MustStartPair(t)
	node := e.status(t, e.edge, e.edgeMgr)["node_id"].(string)
	wait.For(t, 10*time.Second, "the edge to be connected", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == true })

	if st := e.hub.Call(t, "DELETE", "/api/v1/sync/nodes/"+node, e.hub.Login(t, "manager@demo.test", demo.Password), nil, nil); st != 403 {
		t.Errorf("a manager revokes an edge: %d, want 403", st)
	}
	if st := e.hub.Call(t, "DELETE", "/api/v1/sync/nodes/"+newID(), e.hubTok, nil, nil); st != 404 {
		t.Errorf("revoking an unknown edge: %d, want 404", st)
	}
	if st := e.hub.Call(t, "DELETE", "/api/v1/sync/nodes/"+node, e.hubTok, nil, nil); st != 204 {
		t.Fatalf("revoke: %d", st)
	}
	wait.For(t, 10*time.Second, "the revoked edge's link to drop", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	products := e.products(t, e.edge, e.edgeTok)
	order := e.sale(t, products[0]["id"].(string))
	wait.For(t, 10*time.Second, "the sale to wait in the revoked edge's outbox", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["connected"] == false && st["pending_up"].(float64) > 0
	})
	if st := e.hub.Call(t, "GET", "/api/v1/orders/"+order, e.hubTok, nil, nil); st != 404 {
		t.Errorf("the revoked edge's sale reached the hub: %d", st)
	}
	if edges, _ := e.status(t, e.hub, e.hubTok)["edges"].([]any); len(edges) != 0 {
		t.Errorf("the hub still lists %v", edges)
	}
	if st := e.hub.Call(t, "DELETE", "/api/v1/sync/nodes/"+node, e.hubTok, nil, nil); st != 204 {
		t.Errorf("revoking again: %d, want 204", st)
	}
}
