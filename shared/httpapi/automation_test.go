package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/node/hubonly"
	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
	"kassa.dev/sync/wait"
)

// Set moves the test clock to t.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func executions(t *testing.T, tn *testNode, tok, rule string) []map[string]any {
	t.Helper()
	r := tn.Do("GET", "/api/v1/automations/"+rule+"/executions", tok, nil)
	if r.Status != 200 {
		t.Fatalf("executions: %d %s", r.Status, r.Body)
	}
	var out []map[string]any
	for _, x := range r.List() {
		out = append(out, x.(map[string]any))
	}
	return out
}

func mustRule(t *testing.T, tn *testNode, tok string, body map[string]any) string {
	t.Helper()
	r := tn.Do("POST", "/api/v1/automations", tok, body)
	if r.Status != 201 {
		t.Fatalf("create rule: %d %s", r.Status, r.Body)
	}
	return r.Data()["id"].(string)
}

func vipRule() map[string]any {
	return map[string]any{"name": "Tag VIPs",
		"trigger":    map[string]any{"type": "event", "event": "customer.created"},
		"conditions": []any{map[string]any{"field": "email", "operator": "contains", "value": "vip"}},
		"actions":    []any{map[string]any{"type": "tag_customer", "params": map[string]any{"customer_id": "$data.id", "tag": "vip"}}}}
}

func TestAutomationRoutesRefuseBadInputAndKeepToTheOrg(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	a, b := tn.MustOrg("Auto A"), tn.MustOrg("Auto B")
	bCust := tn.Do("POST", "/api/v1/customers", b.Owner, map[string]any{"first_name": "Bea"}).Data()["id"].(string)

	bad := func(mut func(m map[string]any)) map[string]any { m := vipRule(); mut(m); return m }
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"unknown field", bad(func(m map[string]any) { m["colour"] = "red" }), "colour"},
		{"cron that does not parse", bad(func(m map[string]any) {
			m["trigger"] = map[string]any{"type": "schedule", "cron": "61 2 * * *", "timezone": "Europe/Berlin"}
			delete(m, "conditions")
			m["actions"] = []any{map[string]any{"type": "emit_event"}}
		}), "trigger.cron"},
		{"condition on a field the event lacks", bad(func(m map[string]any) {
			m["conditions"] = []any{map[string]any{"field": "total", "operator": "gt", "value": 100}}
		}), "conditions[0].field"},
		{"action on another org's customer", bad(func(m map[string]any) {
			m["actions"] = []any{map[string]any{"type": "tag_customer", "params": map[string]any{"customer_id": bCust, "tag": "x"}}}
		}), "actions[0].params.customer_id"},
		{"unknown action", bad(func(m map[string]any) {
			m["actions"] = []any{map[string]any{"type": "send_sms", "params": map[string]any{}}}
		}), "actions[0].type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustProblem(t, tn.Do("POST", "/api/v1/automations", a.Owner, c.body), 422, "validation")
			if !strings.Contains(fmt.Sprint(p["errors"]), c.field) {
				t.Fatalf("errors %v do not name %s", p["errors"], c.field)
			}
		})
	}
	if l := tn.Do("GET", "/api/v1/automations", a.Owner, nil).List(); len(l) != 0 {
		t.Fatalf("a refused rule was stored: %v", l)
	}

	id := mustRule(t, tn, a.Owner, vipRule())
	if r := tn.Do("GET", "/api/v1/automations/"+id, b.Owner, nil); r.Status != 404 {
		t.Fatalf("B reads A's rule: %d", r.Status)
	}
	r := tn.Do("PATCH", "/api/v1/automations/"+id, a.Owner, map[string]any{"is_active": false})
	if r.Status != 200 || r.Data()["is_active"] != false || r.Data()["name"] != "Tag VIPs" {
		t.Fatalf("PATCH: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("PATCH", "/api/v1/automations/"+id, a.Owner, map[string]any{
		"conditions": []any{map[string]any{"field": "tier", "operator": "eq", "value": "Gold"}}}), 422, "validation")
	if got := tn.Do("GET", "/api/v1/automations/"+id, a.Owner, nil).Data(); len(got["conditions"].([]any)) != 1 ||
		got["conditions"].([]any)[0].(map[string]any)["field"] != "email" {
		t.Fatalf("a refused PATCH changed the rule: %v", got)
	}
	cashier := tn.MustUser(a, "till@a.test", kassa.RoleCashier)
	mustProblem(t, tn.Do("GET", "/api/v1/automations", cashier, nil), 403, "forbidden")
	if r := tn.Do("DELETE", "/api/v1/automations/"+id, a.Owner, nil); r.Status != 204 {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("GET", "/api/v1/automations/"+id, a.Owner, nil), 404, "not-found")

	edge := MustStartNode(t, kassa.NodeEdge, nil)
	e := edge.MustOrg("Edge org")
	if r := edge.Do("GET", "/api/v1/automations", e.Owner, nil); r.Status != 404 {
		t.Fatalf("an edge serves automations: %d", r.Status)
	}
}

func TestAnEventRuleRunsOncePerEventAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Now().UTC()}
	start := func() *testNode {
		return MustStartNode(t, kassa.NodeHub, func(c *node.Config) { c.DataDir, c.Now = dir, clock.Now })
	}
	tn := start()
	a := tn.MustOrg("Event org")
	rule := mustRule(t, tn, a.Owner, vipRule())
	customer := func(tn *testNode, tok, email string) string {
		return tn.Do("POST", "/api/v1/customers", tok, map[string]any{"first_name": "C", "email": email}).Data()["id"].(string)
	}
	vip := customer(tn, a.Owner, "vip@a.test")
	plain := customer(tn, a.Owner, "plain@a.test")
	wait.For(t, 10*time.Second, "two executions", func() bool { return len(executions(t, tn, a.Owner, rule)) == 2 })
	if tags := tn.Do("GET", "/api/v1/customers/"+vip, a.Owner, nil).Data()["tags"]; fmt.Sprint(tags) != "[vip]" {
		t.Fatalf("the VIP's tags: %v", tags)
	}
	if tags := tn.Do("GET", "/api/v1/customers/"+plain, a.Owner, nil).Data()["tags"]; fmt.Sprint(tags) != "[]" {
		t.Fatalf("the plain customer's tags: %v", tags)
	}
	byStatus := map[string]int{}
	for _, x := range executions(t, tn, a.Owner, rule) {
		byStatus[fmt.Sprint(x["status"], " matched=", x["matched"])]++
		if x["trigger"] != "event" || x["event"] != "customer.created" || x["event_id"] == "" {
			t.Fatalf("execution %v", x)
		}
	}
	if byStatus["succeeded matched=true"] != 1 || byStatus["skipped matched=false"] != 1 {
		t.Fatalf("executions: %v", byStatus)
	}

	// Restarted, the engine goes on from its saved position: the two
	// events do not run again; a new one runs once.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tn.N.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	tn = start()
	a.Owner = tn.MustLogin(a.OwnerEmail, testPassword)["accessToken"].(string)
	customer(tn, a.Owner, "vip2@a.test")
	wait.For(t, 10*time.Second, "the third execution", func() bool { return len(executions(t, tn, a.Owner, rule)) >= 3 })
	if n := len(executions(t, tn, a.Owner, rule)); n != 3 {
		t.Fatalf("%d executions after the restart, want 3", n)
	}
}

// mustAwardRule gives org a a loyalty program, a customer enrolled in it
// (cust, acct) and a rule that awards a customer 50 points on
// customer.updated; balance reads the account's points balance.
func mustAwardRule(t *testing.T, tn *testNode, a *testOrg) (cust, acct, rule string, balance func() float64) {
	t.Helper()
	if r := tn.Do("POST", "/api/v1/loyalty/programs", a.Owner, map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 1}); r.Status != 201 {
		t.Fatalf("program: %d %s", r.Status, r.Body)
	}
	cust = tn.Do("POST", "/api/v1/customers", a.Owner, map[string]any{"first_name": "Cy"}).Data()["id"].(string)
	acct = tn.Do("POST", "/api/v1/loyalty/accounts", a.Owner, map[string]any{"customer_id": cust}).Data()["id"].(string)
	rule = mustRule(t, tn, a.Owner, map[string]any{"name": "Welcome back",
		"trigger": map[string]any{"type": "event", "event": "customer.updated"},
		"actions": []any{map[string]any{"type": "award_points", "params": map[string]any{"customer_id": "$data.id", "points": 50}}}})
	balance = func() float64 {
		return tn.Do("GET", "/api/v1/loyalty/accounts/"+acct, a.Owner, nil).Data()["points_balance"].(float64)
	}
	return cust, acct, rule, balance
}

// TestAnActionRunAgainAfterACrashMovesPointsOnce: the engine records a
// batch's executions after their actions, so a crash in between runs the
// actions again after the restart. Points are moved under the action's
// key, so the customer is awarded once and the re-run records the same
// ledger entry.
func TestAnActionRunAgainAfterACrashMovesPointsOnce(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	a := tn.MustOrg("Crash org")
	cust, acct, rule, balance := mustAwardRule(t, tn, a)
	if r := tn.Do("PATCH", "/api/v1/customers/"+cust, a.Owner, map[string]any{"notes": "came back"}); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	var first map[string]any
	wait.For(t, 10*time.Second, "the rule's execution", func() bool {
		xs := executions(t, tn, a.Owner, rule)
		if len(xs) == 1 {
			first = xs[0]
		}
		return first != nil
	})
	if first["status"] != "succeeded" || balance() != 50 {
		t.Fatalf("first run: %v, balance %v", first, balance())
	}
	// The engine idle first (it has read the award's own event too), so
	// no batch of it in flight records its position over the rewind.
	wait.For(t, 10*time.Second, "the engine idle", func() bool {
		n, err := tn.Hub().AutomationBacklog(context.Background())
		return err == nil && n == 0
	})
	if err := tn.Hub().RewindAutomations(context.Background(), first["event_id"].(string)); err != nil {
		t.Fatal(err)
	}
	if xs := executions(t, tn, a.Owner, rule); len(xs) != 0 {
		t.Fatalf("the crash left %d executions", len(xs))
	}
	tn.Hub().WakeAutomations()
	var again map[string]any
	wait.For(t, 10*time.Second, "the execution after the crash", func() bool {
		xs := executions(t, tn, a.Owner, rule)
		if len(xs) == 1 {
			again = xs[0]
		}
		return again != nil
	})
	if again["status"] != "succeeded" || balance() != 50 {
		t.Fatalf("after the re-run: %v, balance %v, want 50", again, balance())
	}
	entry := func(x map[string]any) string { return fmt.Sprint(x["results"].([]any)[0].(map[string]any)["result"]) }
	if entry(again) != entry(first) {
		t.Fatalf("the re-run's ledger entry %v, the first run's %v", entry(again), entry(first))
	}
	// A time-ordered id like every other entry's, so the ledger lists it
	// in its place.
	if id, err := uuid.Parse(entry(first)); err != nil || id.Version() != 7 {
		t.Fatalf("the entry's id %s is no UUIDv7 (%v)", entry(first), err)
	}
	if n := len(tn.Do("GET", "/api/v1/loyalty/accounts/"+acct+"/transactions", a.Owner, nil).List()); n != 1 {
		t.Fatalf("%d ledger entries, want 1", n)
	}
}

// TestAnEdgesEntryUnderAnActionsKeyIsNotTheActions: an edge knows a
// rule's id (the actor of its change records) and picks its own events'
// ids and times, so it can work out the key an award will write its
// ledger entry under (hubonly.EventActionKey) and push an entry under it
// first, then the event. The hub's award must not take that entry for
// its own earlier run — neither a smaller one nor an exact copy made at
// the edge: the execution fails, saying so, and the customer's balance
// shows that no award moved. The rule still awards when nothing forged
// its key.
func TestAnEdgesEntryUnderAnActionsKeyIsNotTheActions(t *testing.T) {
	h := mustConflictHub(t)
	tn, a := h.tn, h.o
	cust, acct, rule, balance := mustAwardRule(t, tn, a)
	execution := func(eventID string) map[string]any {
		var x map[string]any
		wait.For(t, 10*time.Second, "the rule's execution on event "+eventID, func() bool {
			for _, e := range executions(t, tn, a.Owner, rule) {
				if e["event_id"] == eventID {
					x = e
				}
			}
			return x != nil
		})
		return x
	}
	for _, c := range []struct {
		name   string
		points int64
	}{
		{"a smaller award", 1},
		{"a copy of the award", 50},
	} {
		before := balance()
		at := time.Now().UTC().Truncate(time.Millisecond)
		now := at.Format(node.TimeFormat)
		eventID := tn.N.NewID()
		key := hubonly.EventActionKey(rule, eventID, at, 0)
		stamp := hlc.Timestamp{Wall: at.UnixMilli()}
		entry := change.Change{ID: tn.N.NewID(), OrgID: a.ID, Entity: "points_transaction", EntityID: key, Op: change.OpInsert,
			Fields: map[string]any{"id": key, "org_id": a.ID, "account_id": acct, "type": "earn", "points": c.points,
				"balance_after": int64(before) + c.points, "order_id": nil, "reason": "automation", "created_at": now, "updated_at": now},
			HLC: stamp, Origin: h.edge, Actor: h.ownerID}
		event := change.Change{ID: tn.N.NewID(), OrgID: a.ID, Entity: "event", EntityID: eventID, Op: change.OpInsert,
			Fields: map[string]any{"id": eventID, "org_id": a.ID, "location_id": nil, "type": kassa.EventCustomerUpdated,
				"data": `{"id":"` + cust + `"}`, "occurred_at": now, "created_at": now, "updated_at": now},
			HLC: stamp, Origin: h.edge}
		if q, err := tn.N.IngestFrom(context.Background(), a.ID, h.loc, h.edge, []change.Change{entry, event}); err != nil || q != 0 {
			t.Fatalf("%s: the edge's push: %d quarantined, %v", c.name, q, err)
		}
		x := execution(eventID)
		if x["status"] != "failed" || !strings.Contains(fmt.Sprint(x["error"]), "points entry "+key+" is already in the ledger") {
			t.Fatalf("%s: the award took the edge's entry for its own: %v", c.name, x)
		}
		if got, want := balance(), before+float64(c.points); got != want {
			t.Fatalf("%s: balance %v, want %v (the edge's entry only)", c.name, got, want)
		}
	}
	before := balance()
	if r := tn.Do("PATCH", "/api/v1/customers/"+cust, a.Owner, map[string]any{"notes": "came back"}); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	wait.For(t, 10*time.Second, "the hub's own event awarded", func() bool { return balance() == before+50 })
}

// TestRulesThatSetEachOtherOffStopAtTheDepthLimit: one rule tags a
// customer on customer.updated, another untags them on the same event;
// each action's write logs a customer.updated that sets both off again.
// The events an action causes carry its execution's depth + 1, so the
// chain is cut at kassa.MaxAutomationDepth, recorded, and the engine
// goes idle.
func TestRulesThatSetEachOtherOffStopAtTheDepthLimit(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	a := tn.MustOrg("Loop org")
	cust := tn.Do("POST", "/api/v1/customers", a.Owner, map[string]any{"first_name": "Lou"}).Data()["id"].(string)
	rule := func(name, action string) string {
		return mustRule(t, tn, a.Owner, map[string]any{"name": name,
			"trigger": map[string]any{"type": "event", "event": "customer.updated"},
			"actions": []any{map[string]any{"type": action, "params": map[string]any{"customer_id": "$data.id", "tag": "ping"}}}})
	}
	tag, untag := rule("Tag", "tag_customer"), rule("Untag", "untag_customer")
	if r := tn.Do("PATCH", "/api/v1/customers/"+cust, a.Owner, map[string]any{"notes": "start"}); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	cut := func(rule string) bool {
		for _, x := range executions(t, tn, a.Owner, rule) {
			if x["status"] == "skipped" && strings.HasPrefix(fmt.Sprint(x["error"]), "cut: depth") {
				return true
			}
		}
		return false
	}
	wait.For(t, 20*time.Second, "the chain cut at the depth limit and the engine idle", func() bool {
		n, err := tn.Hub().AutomationBacklog(context.Background())
		return err == nil && n == 0 && cut(tag) && cut(untag)
	})
	for _, r := range []string{tag, untag} {
		for _, x := range executions(t, tn, a.Owner, r) {
			if d := x["depth"].(float64); d > kassa.MaxAutomationDepth+1 || (x["status"] != "skipped") != (d <= kassa.MaxAutomationDepth) {
				t.Fatalf("execution at depth %v: %v", d, x)
			}
		}
	}
}

func TestAScheduleFiresAtItsTickInItsZoneAcrossSpringForwardAndARestart(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{}
	clock.Set(time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC)) // Friday before the spring change
	start := func() *testNode {
		return MustStartNode(t, kassa.NodeHub, func(c *node.Config) { c.DataDir, c.Now = dir, clock.Now })
	}
	tn := start()
	a := tn.MustOrg("Schedule org")
	rule := mustRule(t, tn, a.Owner, map[string]any{"name": "Nightly",
		"trigger": map[string]any{"type": "schedule", "cron": "30 2 * * *", "timezone": "Europe/Berlin"},
		"actions": []any{map[string]any{"type": "emit_event", "params": map[string]any{"payload": map[string]any{"job": "nightly"}}}}})
	ticks := func() []string {
		var out []string
		for _, x := range executions(t, tn, a.Owner, rule) {
			out = append([]string{fmt.Sprint(x["tick"])}, out...) // oldest first
		}
		return out
	}
	advance := func(to time.Time, want int) {
		t.Helper()
		clock.Set(to)
		a.Owner = tn.MustLogin(a.OwnerEmail, testPassword)["accessToken"].(string) // the last token expired
		tn.Hub().WakeAutomations()
		wait.For(t, 10*time.Second, fmt.Sprintf("%d ticks by %s", want, to), func() bool { return len(ticks()) >= want })
	}
	// Saturday 02:30 CET is 01:30 UTC.
	advance(time.Date(2026, 3, 28, 1, 30, 0, 0, time.UTC), 1)
	// Sunday: 02:30 does not exist in Berlin (02:00 CET → 03:00 CEST), so
	// the next tick is Monday 02:30 CEST = 00:30 UTC.
	advance(time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC), 1)
	advance(time.Date(2026, 3, 30, 0, 30, 0, 0, time.UTC), 2)
	want := []string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"}
	if got := ticks(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("ticks %v, want %v", got, want)
	}

	// Down for three nights, up again: the latest missed tick fires, once.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tn.N.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Set(time.Date(2026, 4, 2, 6, 0, 0, 0, time.UTC))
	tn = start()
	a.Owner = tn.MustLogin(a.OwnerEmail, testPassword)["accessToken"].(string)
	advance(time.Date(2026, 4, 2, 6, 0, 0, 0, time.UTC), 3)
	advance(time.Date(2026, 4, 3, 0, 30, 0, 0, time.UTC), 4)
	want = append(want, "2026-04-02T00:30:00Z", "2026-04-03T00:30:00Z")
	if got := ticks(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("ticks %v, want %v", got, want)
	}
	for _, x := range executions(t, tn, a.Owner, rule) {
		if x["status"] != "succeeded" || x["trigger"] != "schedule" {
			t.Fatalf("execution %v", x)
		}
	}
}

func TestEmitEventChainsAreCutAtTheDepthLimit(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	a := tn.MustOrg("Chain org")
	starter := mustRule(t, tn, a.Owner, map[string]any{"name": "Start",
		"trigger": map[string]any{"type": "manual"},
		"actions": []any{map[string]any{"type": "emit_event", "params": map[string]any{"payload": map[string]any{"n": 1}}}}})
	echo := mustRule(t, tn, a.Owner, map[string]any{"name": "Echo",
		"trigger":    map[string]any{"type": "event", "event": "automation.triggered"},
		"conditions": []any{map[string]any{"field": "payload.n", "operator": "eq", "value": 1}},
		"actions":    []any{map[string]any{"type": "emit_event", "params": map[string]any{"payload": "$data.payload"}}}})
	r := tn.Do("POST", "/api/v1/automations/trigger", a.Owner, map[string]any{"event": "order.created", "rule_id": starter})
	if r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["status"] != "succeeded" {
		t.Fatalf("trigger: %d %s", r.Status, r.Body)
	}
	// Depths 1, 2, 3 run; the fourth link is cut and says so.
	wait.For(t, 10*time.Second, "the chain cut", func() bool {
		xs := executions(t, tn, a.Owner, echo)
		return len(xs) > 0 && xs[0]["status"] == "skipped"
	})
	xs := executions(t, tn, a.Owner, echo)
	if len(xs) != kassa.MaxAutomationDepth+1 {
		t.Fatalf("%d executions of the echo, want %d", len(xs), kassa.MaxAutomationDepth+1)
	}
	cut := xs[0]
	if cut["depth"] != float64(kassa.MaxAutomationDepth+1) || !strings.Contains(fmt.Sprint(cut["error"]), "depth") || cut["matched"] != false {
		t.Fatalf("the cut execution: %v", cut)
	}
}

// TestARulePausesACampaign: set_campaign_status acts on the campaigns
// service at the hub: a manual run pauses a live campaign, which then
// says so.
func TestARulePausesACampaign(t *testing.T) {
	s := mustCampaignShop(t, kassa.NodeHub)
	c := s.create(t, "/campaigns", s.pastryCampaign(nil))
	if r := s.tn.Do("POST", "/api/v1/campaigns/"+c+"/launch", s.org.Owner, nil); r.Status != 200 || r.Data()["status"] != "active" {
		t.Fatalf("launch: %d %s", r.Status, r.Body)
	}
	rule := mustRule(t, s.tn, s.org.Owner, map[string]any{"name": "Pause pastries",
		"trigger": map[string]any{"type": "manual"},
		"actions": []any{map[string]any{"type": "set_campaign_status", "params": map[string]any{"campaign_id": c, "status": "paused"}}}})
	r := s.tn.Do("POST", "/api/v1/automations/trigger", s.org.Owner, map[string]any{"event": "order.created", "rule_id": rule})
	if r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["status"] != "succeeded" {
		t.Fatalf("trigger: %d %s", r.Status, r.Body)
	}
	if got := s.tn.Do("GET", "/api/v1/campaigns/"+c, s.org.Owner, nil).Data()["status"]; got != "paused" {
		t.Fatalf("the campaign is %v after the rule, want paused", got)
	}
}

// TestExecutionsArePagedAndExpireAfterTheRetention: a rule's executions
// page newest first with limit and cursor like every list, and the
// retention job's step deletes those that started more than 30 days ago
// (the default) by the node's clock, keeping the rest.
func TestExecutionsArePagedAndExpireAfterTheRetention(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	a := tn.MustOrg("Retention org")
	rule := mustRule(t, tn, a.Owner, map[string]any{"name": "By hand", "trigger": map[string]any{"type": "manual"},
		"actions": []any{map[string]any{"type": "emit_event"}}})
	trigger := func() string {
		t.Helper()
		r := tn.Do("POST", "/api/v1/automations/trigger", a.Owner, map[string]any{"event": "order.created", "rule_id": rule})
		if r.Status != 200 || len(r.List()) != 1 {
			t.Fatalf("trigger: %d %s", r.Status, r.Body)
		}
		return r.List()[0].(map[string]any)["id"].(string)
	}
	var made []string // oldest first
	for range 3 {
		made = append(made, trigger())
	}
	tn.Clock.Advance(24 * time.Hour)
	a.Owner = tn.MustLogin(a.OwnerEmail, testPassword)["accessToken"].(string)
	made = append(made, trigger())

	var paged []string
	for path := "/api/v1/automations/" + rule + "/executions?limit=3"; ; {
		r := tn.Do("GET", path, a.Owner, nil)
		if r.Status != 200 {
			t.Fatalf("page: %d %s", r.Status, r.Body)
		}
		for _, x := range r.List() {
			paged = append(paged, x.(map[string]any)["id"].(string))
		}
		if r.JSON()["has_more"] != true {
			break
		}
		path = "/api/v1/automations/" + rule + "/executions?limit=3&cursor=" + r.JSON()["next_cursor"].(string)
	}
	if want := []string{made[3], made[2], made[1], made[0]}; strings.Join(paged, ",") != strings.Join(want, ",") {
		t.Fatalf("paged %v, want newest first %v", paged, want)
	}
	mustProblem(t, tn.Do("GET", "/api/v1/automations/"+rule+"/executions?limit=500", a.Owner, nil), 400, "bad-request")

	// 29 days after the first three nothing is old enough; at 30 days and
	// an hour the first three go, the fourth (a day younger) stays.
	tn.Clock.Advance(28 * 24 * time.Hour)
	if n, err := tn.Hub().ExpireAutomationExecutions(context.Background()); err != nil || n != 0 {
		t.Fatalf("at 29 days: deleted %d, %v", n, err)
	}
	tn.Clock.Advance(25 * time.Hour)
	if n, err := tn.Hub().ExpireAutomationExecutions(context.Background()); err != nil || n != 3 {
		t.Fatalf("at 30 days: deleted %d, %v; want 3", n, err)
	}
	a.Owner = tn.MustLogin(a.OwnerEmail, testPassword)["accessToken"].(string)
	if left := executions(t, tn, a.Owner, rule); len(left) != 1 || left[0]["id"] != made[3] {
		t.Fatalf("left %v, want only the youngest", left)
	}
}

// TestAutomationSchedulesAndRuleCountAreBounded: a schedule may not run
// more often than once a minute, and an org may not hold more than
// kassa.MaxAutomationRules rules; both are 422 problems that change
// nothing (issue 21, N2).
func TestAutomationSchedulesAndRuleCountAreBounded(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	a := tn.MustOrg("Bounded rules")
	every := func(cron string) map[string]any {
		return map[string]any{"name": "every " + cron,
			"trigger": map[string]any{"type": "schedule", "cron": cron},
			"actions": []any{map[string]any{"type": "emit_event"}}}
	}
	for _, cron := range []string{"@every 1s", "@every 30s", "@every 59s"} {
		p := mustProblem(t, tn.Do("POST", "/api/v1/automations", a.Owner, every(cron)), 422, "validation")
		if !strings.Contains(fmt.Sprint(p["errors"]), "trigger.cron") || !strings.Contains(fmt.Sprint(p["errors"]), "once a minute") {
			t.Fatalf("%s: errors %v do not name trigger.cron", cron, p["errors"])
		}
	}
	if l := tn.Do("GET", "/api/v1/automations", a.Owner, nil).List(); len(l) != 0 {
		t.Fatalf("a refused schedule was stored: %v", l)
	}
	id := mustRule(t, tn, a.Owner, every("@every 1m"))
	mustRule(t, tn, a.Owner, every("* * * * *"))
	p := mustProblem(t, tn.Do("PATCH", "/api/v1/automations/"+id, a.Owner, map[string]any{
		"trigger": map[string]any{"type": "schedule", "cron": "@every 5s"}}), 422, "validation")
	if !strings.Contains(fmt.Sprint(p["errors"]), "trigger.cron") {
		t.Fatalf("PATCH errors %v do not name trigger.cron", p["errors"])
	}
	if got := tn.Do("GET", "/api/v1/automations/"+id, a.Owner, nil).Data()["trigger"]; fmt.Sprint(got) != "map[cron:@every 1m type:schedule]" {
		t.Fatalf("a refused PATCH changed the trigger: %v", got)
	}

	for i := 2; i < kassa.MaxAutomationRules; i++ {
		mustRule(t, tn, a.Owner, vipRule())
	}
	p = mustProblem(t, tn.Do("POST", "/api/v1/automations", a.Owner, vipRule()), 422, "validation")
	if !strings.Contains(fmt.Sprint(p["detail"]), fmt.Sprint(kassa.MaxAutomationRules)) {
		t.Fatalf("the cap's problem does not say the cap: %v", p)
	}
	n := 0
	for cursor := ""; ; {
		r := tn.Do("GET", "/api/v1/automations?limit=200"+cursor, a.Owner, nil)
		n += len(r.List())
		next, _ := r.JSON()["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = "&cursor=" + next
	}
	if n != kassa.MaxAutomationRules {
		t.Fatalf("the org holds %d rules, want %d", n, kassa.MaxAutomationRules)
	}
	b := tn.MustOrg("Other org")
	mustRule(t, tn, b.Owner, vipRule())
}
