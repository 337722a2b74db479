package synctest

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/webhooktest"
	"kassa.dev/sync/change"
	"kassa.dev/sync/wait"
)

// alertRules is deploy/prometheus/alerts.yml as Prometheus reads it.
type alertRules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// balanced reports whether the brackets and quotes of a PromQL expression
// pair up (a light check: the full parser is a heavy dependency).
func balanced(expr string) bool {
	var stack []rune
	pairs := map[rune]rune{')': '(', ']': '[', '}': '{'}
	inQuote := false
	for _, r := range expr {
		switch {
		case r == '"':
			inQuote = !inQuote
		case inQuote:
		case r == '(' || r == '[' || r == '{':
			stack = append(stack, r)
		case pairs[r] != 0:
			if len(stack) == 0 || stack[len(stack)-1] != pairs[r] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return !inQuote && len(stack) == 0
}

var metricName = regexp.MustCompile(`\bkassa_[a-z0-9_]+`)

// alarmExprs reads the alarms and the dashboard and returns every PromQL
// expression they hold, by where it is; it fails the test for a rule
// without its parts.
func alarmExprs(t *testing.T) map[string]string {
	exprs := map[string]string{}
	b, err := os.ReadFile("../../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules alertRules
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	severities := map[string]bool{"critical": true, "warning": true, "info": true}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || r.Expr == "" || r.For == "" || !severities[r.Labels["severity"]] || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("rule %q of group %q lacks alert, expr, for, a severity or its summary and description", r.Alert, g.Name)
			}
			if _, err := time.ParseDuration(r.For); err != nil {
				t.Errorf("rule %s: for %q: %v", r.Alert, r.For, err)
			}
			exprs["alert "+r.Alert] = r.Expr
		}
	}
	if n < 10 {
		t.Fatalf("alerts.yml has %d rules", n)
	}
	b, err = os.ReadFile("../../deploy/grafana/kassa-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("kassa-dashboard.json: %v", err)
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs["panel "+p.Title+": "+tg.Expr] = tg.Expr
		}
	}
	for where, e := range exprs {
		if !balanced(e) {
			t.Errorf("%s: brackets or quotes do not pair up: %s", where, e)
		}
	}
	return exprs
}

// TestAlarmsAndDashboardUseTheMetricsTheNodesExpose checks the alarm rules'
// shape and that every kassa_* metric the alarms and the dashboard use is
// served by a running hub's or edge's /metrics, after a sale, a webhook
// delivery, a verification and a refused change made each of them exist.
func TestAlarmsAndDashboardUseTheMetricsTheNodesExpose(t *testing.T) {
	exprs := alarmExprs(t)
	used := map[string][]string{} // metric → where it is used, once each
	for where, e := range exprs {
		seen := map[string]bool{}
		for _, m := range metricName.FindAllString(e, -1) {
			if !seen[m] {
				seen[m] = true
				used[m] = append(used[m], where)
			}
		}
	}

	e := MustStartPair(t)
	r := webhooktest.New(t)
	registerHook(t, e.hub, e.hubTok, r, kassa.EventOrderCreated)
	e.sale(t, e.products(t, e.edge, e.edgeTok)[0]["id"].(string))
	r.WaitFor(30*time.Second, kassa.EventOrderCreated, 1)
	wait.For(t, 30*time.Second, "the edge to verify", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["last_verified"] != nil && st["pending_up"] == float64(0)
	})
	// A refused change: quarantined records and their count exist.
	f := e.mustForge(t, e.location)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	f.push(t, f.change("org", f.id.Org, change.OpUpdate, "", e.hubOwnerID(t), map[string]any{"settings": `{}`, "updated_at": now}))

	// Wait until all are served, or report those that are not after 10 s.
	var missing []string
	deadline := time.Now().Add(10 * time.Second)
	wait.For(t, 20*time.Second, "the metrics the alarms use", func() bool {
		text := metricsText(t, e.hub.URL) + metricsText(t, e.edge.URL)
		missing = missing[:0]
		for m := range used {
			if !regexp.MustCompile(`(?m)^` + m + `[{ ]`).MatchString(text) {
				missing = append(missing, m)
			}
		}
		return len(missing) == 0 || time.Now().After(deadline)
	})
	if len(missing) > 0 {
		sort.Strings(missing)
		var b strings.Builder
		for _, m := range missing {
			sort.Strings(used[m])
			b.WriteString("\n  " + m + " (used by " + strings.Join(used[m], "; ") + ")")
		}
		t.Fatalf("metrics no node serves:%s", b.String())
	}
}
