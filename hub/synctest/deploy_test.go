package synctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestContainerImagesRunAsNonRootWithAHealthcheck reads the Dockerfiles:
// multi-stage, cgo on for SQLite, the release stamped in, and a runtime
// stage with a non-root user, a data volume, ports and a HEALTHCHECK the
// binary answers (it has a healthcheck subcommand, tested on its own).
func TestContainerImagesRunAsNonRootWithAHealthcheck(t *testing.T) {
	for _, bin := range []string{"hub", "edge"} {
		b, err := os.ReadFile("../../deploy/docker/" + bin + ".Dockerfile")
		if err != nil {
			t.Fatal(err)
		}
		stages := regexp.MustCompile(`(?m)^FROM `).Split(string(b), -1)
		if len(stages) < 3 {
			t.Fatalf("%s.Dockerfile is not multi-stage", bin)
		}
		build, runtime := strings.Join(stages[1:len(stages)-1], ""), stages[len(stages)-1]
		for _, want := range []string{"CGO_ENABLED=1", "-X kassa.dev/shared/kassa.Version=${VERSION}", "ARG VERSION"} {
			if !strings.Contains(build, want) {
				t.Errorf("%s.Dockerfile's build stage lacks %q", bin, want)
			}
		}
		user := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindStringSubmatch(runtime)
		if user == nil || user[1] == "root" || strings.HasPrefix(user[1], "0") {
			t.Errorf("%s.Dockerfile's runtime stage runs as %v, want a non-root USER", bin, user)
		}
		for _, want := range []string{"HEALTHCHECK", `"kassa-` + bin + `", "healthcheck"`, "VOLUME /var/lib/kassa/" + bin, "EXPOSE ", "ENTRYPOINT"} {
			if !strings.Contains(runtime, want) {
				t.Errorf("%s.Dockerfile's runtime stage lacks %q", bin, want)
			}
		}
	}
	if b, err := os.ReadFile("../../.dockerignore"); err != nil || !strings.Contains(string(b), ".git") {
		t.Errorf(".dockerignore: %v", err)
	}
}

// TestComposeRunsAHubAndTwoEdgesOverTLS parses deploy/compose.yaml: a hub
// serving HTTPS and TLS on the leaf link, two edges that verify it
// against the CA and enrol with the tokens init makes, each with a data
// volume and a healthcheck; every file it mounts or builds from exists.
func TestComposeRunsAHubAndTwoEdgesOverTLS(t *testing.T) {
	b, err := os.ReadFile("../../deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type service struct {
		Image       string `yaml:"image"`
		Build       struct{ Context, Dockerfile string }
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Healthcheck *struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
		DependsOn map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	}
	var c struct {
		Services map[string]service `yaml:"services"`
		Volumes  map[string]any     `yaml:"volumes"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	for _, name := range []string{"certs", "init", "hub", "edge1", "edge2"} {
		if _, ok := c.Services[name]; !ok {
			t.Fatalf("compose.yaml has no service %s", name)
		}
	}
	hub := c.Services["hub"]
	if hub.Environment["KASSA_TLS_CERT"] == "" || hub.Environment["KASSA_TLS_KEY"] == "" || !strings.HasPrefix(hub.Environment["KASSA_LEAF_ADVERTISE"], "nats-leaf://hub:") {
		t.Errorf("the hub serves no TLS: %v", hub.Environment)
	}
	if hub.DependsOn["certs"].Condition != "service_completed_successfully" || c.Services["init"].DependsOn["hub"].Condition != "service_healthy" {
		t.Errorf("certs, hub, init do not start in order")
	}
	for _, name := range []string{"hub", "edge1", "edge2"} {
		s := c.Services[name]
		if s.Healthcheck == nil || len(s.Healthcheck.Test) < 3 || s.Healthcheck.Test[2] != "healthcheck" {
			t.Errorf("%s has no healthcheck by the binary: %+v", name, s.Healthcheck)
		}
		if s.Build.Dockerfile == "" {
			t.Errorf("%s builds no image", name)
		} else if _, err := os.Stat(filepath.Join("../../deploy", s.Build.Context, s.Build.Dockerfile)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		data := false
		for _, v := range s.Volumes {
			data = data || strings.HasPrefix(v, name+"-data:/var/lib/kassa/")
		}
		if !data {
			t.Errorf("%s keeps its data in no named volume: %v", name, s.Volumes)
		}
		if _, ok := c.Volumes[name+"-data"]; !ok {
			t.Errorf("volume %s-data is not declared", name)
		}
		if name == "hub" {
			continue
		}
		env := s.Environment
		if env["KASSA_TLS_CA"] == "" || env["KASSA_TLS_CERT"] == "" || !strings.HasPrefix(env["KASSA_HUB_URL"], "https://hub:") || env["KASSA_EDGE_NAME"] != name {
			t.Errorf("%s does not enrol with the hub over TLS: %v", name, env)
		}
		if s.DependsOn["init"].Condition != "service_completed_successfully" {
			t.Errorf("%s starts before init made its enrolment token", name)
		}
	}
	for _, name := range []string{"certs", "init"} {
		for _, v := range c.Services[name].Volumes {
			if src, _, _ := strings.Cut(v, ":"); strings.HasPrefix(src, "./") {
				if _, err := os.Stat(filepath.Join("../../deploy", src)); err != nil {
					t.Errorf("%s mounts %s: %v", name, src, err)
				}
			}
		}
	}
}

// TestComposeCheckSaysWhyItSkips runs deploy/compose-check.sh where no
// container runtime answers: it must succeed and name the reason, so that
// make test runs on such machines and says what it did not check.
func TestComposeCheckSaysWhyItSkips(t *testing.T) {
	if exec.Command("docker", "info").Run() == nil {
		t.Skip("a container runtime runs here: make compose-check exercises it")
	}
	out, err := exec.Command("bash", "../../deploy/compose-check.sh").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "compose-check: skipped — no container runtime (docker info: ") {
		t.Fatalf("compose-check without a runtime: %v\n%s", err, out)
	}
}

// TestComposeClusterRunsThreeHubsOnOnePostgreSQLAndTwoEdges parses
// deploy/compose.cluster.yaml: three hubs on the one PostgreSQL (sorting
// text as C, archiving its WAL), each joined to the others' routes with
// the secret from the environment, each leaf URL given to every edge, the
// hubs' one certificate naming each of them (certs.sh), and two edges
// enrolled at hub1 over TLS.
func TestComposeClusterRunsThreeHubsOnOnePostgreSQLAndTwoEdges(t *testing.T) {
	b, err := os.ReadFile("../../deploy/compose.cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type service struct {
		Environment map[string]string `yaml:"environment"`
		Command     []string          `yaml:"command"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	}
	var c struct {
		Services map[string]service `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.cluster.yaml: %v", err)
	}
	pg := c.Services["postgres"]
	if !strings.Contains(pg.Environment["POSTGRES_INITDB_ARGS"], "--locale=C") || !strings.Contains(strings.Join(pg.Command, " "), "archive_mode=on") {
		t.Errorf("the database does not sort as C or archives no WAL: %v %v", pg.Environment, pg.Command)
	}
	certs, err := os.ReadFile("../../deploy/docker/certs.sh")
	if err != nil {
		t.Fatal(err)
	}
	store := c.Services["hub1"].Environment["KASSA_STORE"]
	for _, name := range []string{"hub1", "hub2", "hub3"} {
		env := c.Services[name].Environment
		if !strings.HasPrefix(env["KASSA_STORE"], "postgres://") || !strings.Contains(env["KASSA_STORE"], "@postgres:5432/") || env["KASSA_STORE"] != store {
			t.Errorf("%s is not on the one PostgreSQL: %q", name, env["KASSA_STORE"])
		}
		if c.Services[name].DependsOn["postgres"].Condition != "service_healthy" {
			t.Errorf("%s starts before PostgreSQL is ready", name)
		}
		_, port, _ := strings.Cut(env["KASSA_CLUSTER_LISTEN"], ":")
		if port == "" || !strings.Contains(","+env["KASSA_CLUSTER_ROUTES"]+",", ","+name+":"+port+",") {
			t.Errorf("%s's route listener %q is not in the routes %q", name, env["KASSA_CLUSTER_LISTEN"], env["KASSA_CLUSTER_ROUTES"])
		}
		if !strings.HasPrefix(env["KASSA_CLUSTER_SECRET"], "${") {
			t.Errorf("%s's route secret is written in the file, not taken from the environment", name)
		}
		if adv := env["KASSA_LEAF_ADVERTISE"]; adv != "nats-leaf://"+name+":7422" || !strings.Contains(env["KASSA_LEAF_URLS"], adv) {
			t.Errorf("%s's leaf URL %q is not among those given to edges: %q", name, adv, env["KASSA_LEAF_URLS"])
		}
		if !strings.Contains(string(certs), "DNS:"+name) {
			t.Errorf("the hubs' certificate does not name %s (certs.sh)", name)
		}
	}
	for _, name := range []string{"edge1", "edge2"} {
		env := c.Services[name].Environment
		if env["KASSA_TLS_CA"] == "" || !strings.HasPrefix(env["KASSA_HUB_URL"], "https://hub1:") {
			t.Errorf("%s does not enrol at hub1 over TLS: %v", name, env)
		}
	}
}
