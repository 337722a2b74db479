package synctest

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"kassa.dev/edge/edgenode"
	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/node"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/freeport"
	"kassa.dev/sync/wait"
)

// TestComposeRehearsalWithoutContainers runs the compose setup's own
// pieces on this machine, no container engine needed: deploy/docker/certs.sh
// makes the certificates, the hub starts with the environment its image
// and deploy/compose.yaml give it, deploy/docker/init.sh creates the org
// and the enrolment tokens through the hub's API, and both edges start with
// their tokens the way the compose entrypoint passes them. Container paths
// (volumes), the host name hub and the published ports are mapped to temp
// dirs and free loopback ports, derived from compose.yaml, so that this
// test breaks when compose.yaml or the scripts do. Over HTTPS against the
// CA: every node passes its compose healthcheck, both edges are connected
// in the hub's /sync/status, and a sale at edge1 reaches the hub.
func TestComposeRehearsalWithoutContainers(t *testing.T) {
	r := newRehearsal(t, map[string]string{
		"KASSA_OPERATOR_TOKEN": randomHex(t, 24),
		"KASSA_OWNER_PASSWORD": randomHex(t, 12),
	})

	r.runOnce("certs")
	ca := r.caClient()
	hub := r.startNode("hub", hubnode.Run, nil)
	hub.Client = ca
	r.healthcheck("hub")
	r.runOnce("init")
	edges := map[string]*nodetest.Proc{}
	for _, name := range []string{"edge1", "edge2"} {
		edges[name] = r.startNode(name, edgenode.Run, r.entrypointArgs(name))
		edges[name].Client = ca
		r.healthcheck(name)
	}
	if !strings.HasPrefix(hub.URL, "https://") || !strings.HasPrefix(edges["edge1"].URL, "https://") {
		t.Fatalf("the nodes do not serve HTTPS: hub %s, edge1 %s", hub.URL, edges["edge1"].URL)
	}

	initEnv := r.environment("init") // the owner init made
	email, password := initEnv["KASSA_OWNER_EMAIL"], initEnv["KASSA_OWNER_PASSWORD"]
	owner := hub.Login(t, email, password)
	wait.For(t, 60*time.Second, "both edges connected at the hub", func() bool {
		var st struct {
			Data struct {
				Edges []struct {
					Connected bool `json:"connected"`
				} `json:"edges"`
			} `json:"data"`
		}
		n := 0
		if hub.Call(t, "GET", "/api/v1/sync/status", owner, nil, &st) == 200 {
			for _, e := range st.Data.Edges {
				if e.Connected {
					n++
				}
			}
		}
		return n == 2
	})

	var product oneResp
	if st := hub.Call(t, "POST", "/api/v1/catalog/products", owner, map[string]any{"name": "Rehearsal coffee", "sku": "REHEARSE-1", "base_price": 250}, &product); st != 201 {
		t.Fatalf("product at the hub: %d %v", st, product)
	}
	productID := product.Data["id"].(string)
	edge1 := edges["edge1"]
	tok := edge1.WaitLogin(t, 60*time.Second, email, password)
	wait.For(t, 60*time.Second, "the product at edge1", func() bool {
		return edge1.Call(t, "GET", "/api/v1/catalog/products/"+productID, tok, nil, nil) == 200
	})
	var locs listResp
	edge1.Call(t, "GET", "/api/v1/locations", tok, nil, &locs)
	if len(locs.Data) == 0 {
		t.Fatal("edge1 has no location")
	}
	var order oneResp
	if st := edge1.Call(t, "POST", "/api/v1/orders", tok, map[string]any{"location_id": locs.Data[0]["id"],
		"line_items": []map[string]any{{"product_id": productID, "quantity": 1}}}, &order); st != 201 {
		t.Fatalf("order at edge1: %d %v", st, order)
	}
	id := order.Data["id"].(string)
	if st := edge1.Call(t, "POST", "/api/v1/payments/initiate", tok, map[string]any{"order_id": id, "amount": order.Data["total"], "method": "cash"}, nil); st/100 != 2 {
		t.Fatalf("payment at edge1: %d", st)
	}
	if st := edge1.Call(t, "POST", "/api/v1/orders/"+id+"/complete", tok, nil, nil); st != 200 {
		t.Fatalf("complete at edge1: %d", st)
	}
	wait.For(t, 60*time.Second, "edge1's sale at the hub", func() bool {
		var o oneResp
		return hub.Call(t, "GET", "/api/v1/orders/"+id, owner, nil, &o) == 200 && o.Data["status"] == "completed"
	})
}

// TestComposeInitStopsAtTheFirstFailedCall runs deploy/docker/init.sh
// against a hub that does not answer: it fails with the first call's error
// alone and writes no enrolment token. (It used to go on with empty ids,
// as jq 1.6 exits 0 on empty input, and "succeed" with empty token files
// the edges then crash-looped on.)
func TestComposeInitStopsAtTheFirstFailedCall(t *testing.T) {
	r := newRehearsal(t, map[string]string{
		"KASSA_OPERATOR_TOKEN": randomHex(t, 24),
		"KASSA_OWNER_PASSWORD": randomHex(t, 12),
	})
	r.runOnce("certs")
	out, err := r.run("init") // the hub never started: its port refuses
	if err == nil {
		t.Fatalf("init succeeded without a hub:\n%s", out)
	}
	if n := strings.Count(string(out), "curl: "); n != 1 {
		t.Errorf("init went on after the first failed call (%d curl errors):\n%s", n, out)
	}
	if files, _ := os.ReadDir(r.volumes["tokens"]); len(files) != 0 {
		t.Errorf("init without a hub left %d files in the tokens volume", len(files))
	}
}

// composeService is what the rehearsal reads of a compose service.
type composeService struct {
	Build struct {
		Context, Dockerfile string
	} `yaml:"build"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Command     []string          `yaml:"command"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// rehearsal maps deploy/compose.yaml onto this machine: each named volume
// is a temp dir, each bind mount its file in deploy/, each service's
// published container port a free loopback port.
type rehearsal struct {
	t        *testing.T
	deploy   string
	env      map[string]string // the compose file's own variables (KASSA_OPERATOR_TOKEN…)
	services map[string]composeService
	volumes  map[string]string            // named volume → host dir
	ports    map[string]map[string]string // service → container port → host port
}

func newRehearsal(t *testing.T, env map[string]string) *rehearsal {
	t.Helper()
	for _, tool := range []string{"sh", "openssl", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("compose rehearsal skipped: no %s on this machine (certs.sh and init.sh need it)", tool)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("compose rehearsal skipped: certs.sh and init.sh chown to the nodes' uid 10001, as root does in their containers")
	}
	deploy, err := filepath.Abs("../../deploy")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(deploy, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]composeService `yaml:"services"`
		Volumes  map[string]any            `yaml:"volumes"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	r := &rehearsal{t: t, deploy: deploy, env: env, services: c.Services, volumes: map[string]string{}, ports: map[string]map[string]string{}}
	for name := range c.Volumes {
		r.volumes[name] = t.TempDir()
	}
	for name, s := range c.Services {
		r.ports[name] = map[string]string{}
		for _, p := range s.Ports {
			parts := strings.Split(p, ":")
			r.ports[name][parts[len(parts)-1]] = freePort(t)
		}
	}
	return r
}

// service is the named service, failing the test if compose.yaml lacks it.
func (r *rehearsal) service(name string) composeService {
	s, ok := r.services[name]
	if !ok {
		r.t.Fatalf("compose.yaml has no service %s", name)
	}
	return s
}

// interpolate expands compose's ${VAR}, ${VAR:-default} and ${VAR:?error}
// from the rehearsal's variables; a missing :? variable fails the test, as
// compose refuses to start.
var interpolateRe = regexp.MustCompile(`\$\{(\w+)(?::([-?])([^}]*))?\}`)

func (r *rehearsal) interpolate(v string) string {
	return interpolateRe.ReplaceAllStringFunc(v, func(m string) string {
		g := interpolateRe.FindStringSubmatch(m)
		if val := r.env[g[1]]; val != "" {
			return val
		}
		switch g[2] {
		case "-":
			return g[3]
		case "?":
			r.t.Fatalf("compose.yaml: %s", g[3])
		}
		return ""
	})
}

// mounts are the service's volumes as container path → host path.
func (r *rehearsal) mounts(svc string) map[string]string {
	m := map[string]string{}
	for _, v := range r.service(svc).Volumes {
		parts := strings.Split(v, ":")
		src, dst := parts[0], parts[1]
		if strings.HasPrefix(src, ".") {
			m[dst] = filepath.Join(r.deploy, src)
		} else if dir, ok := r.volumes[src]; ok {
			m[dst] = dir
		} else {
			r.t.Fatalf("compose.yaml: %s mounts undeclared volume %s", svc, src)
		}
	}
	return m
}

var hostPortRe = regexp.MustCompile(`([A-Za-z0-9.-]+):(\d+)`)

// localize maps a value as the service sees it in its container to this
// machine: a path under a mount to the mount's host path, hub:PORT (a
// service's name) or 0.0.0.0:PORT (the service itself) to 127.0.0.1 and
// the published port's stand-in, a bare published port likewise, and the
// wildcard address to loopback.
func (r *rehearsal) localize(svc, v string) string {
	mounts := r.mounts(svc)
	dsts := make([]string, 0, len(mounts))
	for dst := range mounts {
		dsts = append(dsts, dst)
	}
	sort.Slice(dsts, func(i, j int) bool { return len(dsts[i]) > len(dsts[j]) })
	for _, dst := range dsts {
		if v == dst || strings.HasPrefix(v, dst+"/") {
			return mounts[dst] + v[len(dst):]
		}
	}
	if p, ok := r.ports[svc][v]; ok {
		return p
	}
	if v == "0.0.0.0" {
		return "127.0.0.1"
	}
	return hostPortRe.ReplaceAllStringFunc(v, func(hp string) string {
		g := hostPortRe.FindStringSubmatch(hp)
		target := g[1]
		if target == "0.0.0.0" || target == "localhost" {
			target = svc
		}
		if p, ok := r.ports[target][g[2]]; ok {
			return "127.0.0.1:" + p
		}
		return hp
	})
}

// environment is the service's environment on this machine: its image's
// ENV (Dockerfile) overlaid by compose.yaml's, interpolated and localized.
func (r *rehearsal) environment(svc string) map[string]string {
	s := r.service(svc)
	env := map[string]string{}
	if s.Build.Dockerfile != "" {
		for k, v := range dockerfileEnv(r.t, filepath.Join(r.deploy, s.Build.Context, s.Build.Dockerfile)) {
			env[k] = v
		}
	}
	for k, v := range s.Environment {
		env[k] = r.interpolate(v)
	}
	for k, v := range env {
		env[k] = r.localize(svc, v)
	}
	return env
}

// dockerfileEnv reads the ENV of a Dockerfile's last (runtime) stage.
func dockerfileEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stages := regexp.MustCompile(`(?m)^FROM `).Split(string(b), -1)
	text := strings.ReplaceAll(stages[len(stages)-1], "\\\n", " ")
	env := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "ENV ")
		if !ok {
			continue
		}
		for _, kv := range strings.Fields(rest) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
	}
	return env
}

// runOnce runs a one-shot service's command (a shell script) with its
// environment, as compose does before the services that depend on it,
// failing the test unless it succeeds.
func (r *rehearsal) runOnce(svc string) {
	r.t.Helper()
	out, err := r.run(svc)
	if err != nil {
		r.t.Fatalf("%s (%s): %v\n%s", svc, strings.Join(r.service(svc).Command, " "), err, out)
	}
	r.t.Logf("%s: %s", svc, strings.TrimSpace(string(out)))
}

// run runs a one-shot service's command and returns its output.
func (r *rehearsal) run(svc string) ([]byte, error) {
	r.t.Helper()
	s := r.service(svc)
	if len(s.Command) == 0 {
		r.t.Fatalf("compose.yaml: %s has no command", svc)
	}
	args := make([]string, len(s.Command))
	for i, a := range s.Command {
		args[i] = r.localize(svc, a)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.t.TempDir()}
	for k, v := range r.environment(svc) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// The scripts' container paths, given as the mounts there are.
	mounts := r.mounts(svc)
	for dst, env := range map[string]string{"/certs": "KASSA_CERTS_DIR", "/tokens": "KASSA_TOKENS_DIR"} {
		if dir, ok := mounts[dst]; ok {
			cmd.Env = append(cmd.Env, env+"="+dir)
		}
	}
	return cmd.CombinedOutput()
}

// startNode runs a node's main in-process with the service's environment.
func (r *rehearsal) startNode(svc string, run nodetest.MainFunc, args []string) *nodetest.Proc {
	r.t.Helper()
	return nodetest.Start(r.t, run, r.environment(svc), args...)
}

// entrypointArgs are the arguments the edges' compose entrypoint
// (`exec kassa-edge --enrol-token "$(cat /tokens/$KASSA_EDGE_NAME.token)"`)
// gives the binary, read from the same token file here.
var entrypointRe = regexp.MustCompile(`^exec kassa-edge (--enrol-token) "\$\(cat ([^)]+)\)"$`)

func (r *rehearsal) entrypointArgs(svc string) []string {
	r.t.Helper()
	ep := r.service(svc).Entrypoint
	if len(ep) != 3 || ep[0] != "/bin/sh" || ep[1] != "-c" {
		r.t.Fatalf("compose.yaml: %s's entrypoint is not a shell command: %q", svc, ep)
	}
	m := entrypointRe.FindStringSubmatch(strings.ReplaceAll(ep[2], "$$", "$"))
	if m == nil {
		r.t.Fatalf("compose.yaml: %s's entrypoint changed, the rehearsal does not know it: %q", svc, ep[2])
	}
	env := r.service(svc).Environment
	path := r.localize(svc, os.Expand(m[2], func(k string) string { return env[k] }))
	b, err := os.ReadFile(path)
	if err != nil {
		r.t.Fatalf("%s's enrolment token: %v", svc, err)
	}
	return []string{m[1], strings.TrimSpace(string(b))}
}

// healthcheck runs the service's compose healthcheck (the binary's own
// subcommand) with the service's environment.
func (r *rehearsal) healthcheck(svc string) {
	r.t.Helper()
	hc := r.service(svc).Healthcheck
	if hc == nil || len(hc.Test) != 3 || hc.Test[0] != "CMD" {
		r.t.Fatalf("compose.yaml: %s has no CMD healthcheck", svc)
	}
	commands := map[string]map[string]node.Command{
		"kassa-hub": hubnode.Commands, "kassa-edge": edgenode.Commands,
	}
	cmd, ok := commands[hc.Test[1]][hc.Test[2]]
	if !ok {
		r.t.Fatalf("compose.yaml: %s's healthcheck %q is no subcommand of the binaries", svc, hc.Test)
	}
	env := r.environment(svc)
	var out strings.Builder
	if err := cmd(r.t.Context(), nil, func(k string) string { return env[k] }, &out); err != nil {
		r.t.Fatalf("%s healthcheck: %v\n%s", svc, err, out.String())
	}
}

// caClient trusts only the CA certs.sh made.
func (r *rehearsal) caClient() *http.Client {
	r.t.Helper()
	pem, err := os.ReadFile(filepath.Join(r.volumes["certs"], "ca.crt"))
	if err != nil {
		r.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		r.t.Fatal("certs.sh's ca.crt holds no certificate")
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

// freePort is a loopback TCP port free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	p, err := freeport.Pick()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(p)
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
