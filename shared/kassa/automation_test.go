package kassa_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// anyCron accepts every expression but "bad"; the real parser is the
// node's (robfig/cron/v3), tested there.
func anyCron(expr string, _ *time.Location) (func(time.Time) time.Time, error) {
	if expr == "bad" {
		return nil, errors.New("expected 5 fields")
	}
	return func(t time.Time) time.Time { return t.Truncate(time.Hour).Add(time.Hour) }, nil
}

func rule(mut func(r *kassa.AutomationRule)) *kassa.AutomationRule {
	r := &kassa.AutomationRule{Name: "Tag gold", IsActive: true,
		Trigger:    kassa.Trigger{Type: kassa.TriggerEvent, Event: kassa.EventLoyaltyTierChanged},
		Conditions: []kassa.Condition{{Field: "tier", Operator: kassa.OpEq, Value: "Gold"}},
		Actions:    []kassa.Action{{Type: kassa.ActionTagCustomer, Params: map[string]any{"customer_id": "$data.customer_id", "tag": "gold"}}}}
	if mut != nil {
		mut(r)
	}
	return r
}

func TestAutomationValidationNamesTheField(t *testing.T) {
	if err := rule(nil).Validate(anyCron); err != nil {
		t.Fatalf("a valid rule: %v", err)
	}
	id := "0190a3c4-0000-7000-8000-000000000001"
	cases := []struct {
		name  string
		mut   func(r *kassa.AutomationRule)
		field string
	}{
		{"no name", func(r *kassa.AutomationRule) { r.Name = "" }, "name"},
		{"unknown trigger", func(r *kassa.AutomationRule) { r.Trigger.Type = "webhook" }, "trigger.type"},
		{"unknown event", func(r *kassa.AutomationRule) { r.Trigger.Event = "order.eaten" }, "trigger.event"},
		{"test.ping is not logged", func(r *kassa.AutomationRule) { r.Trigger.Event = kassa.EventTestPing; r.Conditions = nil }, "trigger.event"},
		{"cron that does not parse", func(r *kassa.AutomationRule) {
			r.Trigger, r.Conditions = kassa.Trigger{Type: kassa.TriggerSchedule, Cron: "bad"}, nil
			r.Actions = []kassa.Action{{Type: kassa.ActionEmitEvent}}
		}, "trigger.cron"},
		{"CRON_TZ inside the expression", func(r *kassa.AutomationRule) {
			r.Trigger, r.Conditions = kassa.Trigger{Type: kassa.TriggerSchedule, Cron: "CRON_TZ=UTC 0 2 * * *"}, nil
			r.Actions = []kassa.Action{{Type: kassa.ActionEmitEvent}}
		}, "trigger.cron"},
		{"unknown time zone", func(r *kassa.AutomationRule) {
			r.Trigger, r.Conditions = kassa.Trigger{Type: kassa.TriggerSchedule, Cron: "0 2 * * *", Timezone: "Mars/Olympus"}, nil
			r.Actions = []kassa.Action{{Type: kassa.ActionEmitEvent}}
		}, "trigger.timezone"},
		{"a condition on a field the data lacks", func(r *kassa.AutomationRule) { r.Conditions[0].Field = "tire" }, "conditions[0].field"},
		{"a condition on an order's field for a customer event", func(r *kassa.AutomationRule) {
			r.Trigger.Event = kassa.EventCustomerCreated
			r.Conditions[0].Field = "line_items.0.sku"
			r.Actions[0].Params["customer_id"] = "$data.id"
		}, "conditions[0].field"},
		{"a condition on a schedule", func(r *kassa.AutomationRule) {
			r.Trigger = kassa.Trigger{Type: kassa.TriggerSchedule, Cron: "0 2 * * *"}
			r.Actions = []kassa.Action{{Type: kassa.ActionEmitEvent}}
		}, "conditions[0].field"},
		{"unknown operator", func(r *kassa.AutomationRule) { r.Conditions[0].Operator = "like" }, "conditions[0].operator"},
		{"in without an array", func(r *kassa.AutomationRule) { r.Conditions[0].Operator = kassa.OpIn }, "conditions[0].value"},
		{"no actions", func(r *kassa.AutomationRule) { r.Actions = nil }, "actions"},
		{"unknown action", func(r *kassa.AutomationRule) { r.Actions[0].Type = "send_sms" }, "actions[0].type"},
		{"unknown param", func(r *kassa.AutomationRule) { r.Actions[0].Params["colour"] = "red" }, "actions[0].params.colour"},
		{"missing param", func(r *kassa.AutomationRule) { delete(r.Actions[0].Params, "tag") }, "actions[0].params.tag"},
		{"bad id", func(r *kassa.AutomationRule) { r.Actions[0].Params["customer_id"] = "ann" }, "actions[0].params.customer_id"},
		{"a $data ref the event lacks", func(r *kassa.AutomationRule) { r.Actions[0].Params["customer_id"] = "$data.buyer" }, "actions[0].params.customer_id"},
		{"points not whole", func(r *kassa.AutomationRule) {
			r.Actions = []kassa.Action{{Type: kassa.ActionAwardPoints, Params: map[string]any{"customer_id": id, "points": 1.5}}}
		}, "actions[0].params.points"},
		{"campaign status", func(r *kassa.AutomationRule) {
			r.Actions = []kassa.Action{{Type: kassa.ActionSetCampaignStatus, Params: map[string]any{"campaign_id": id, "status": "draft"}}}
		}, "actions[0].params.status"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := rule(c.mut).Validate(anyCron)
			if got := fieldsOf(err); len(got) == 0 || !strings.Contains(strings.Join(got, " "), c.field) {
				t.Fatalf("fields %v (err %v), want %s", got, err, c.field)
			}
		})
	}
}

func TestEventFieldsComeFromTheDataResourceTypes(t *testing.T) {
	for _, c := range []struct {
		typ, path string
		ok        bool
	}{
		{kassa.EventOrderCompleted, "total", true},
		{kassa.EventOrderCompleted, "customer_id", true},
		{kassa.EventOrderCompleted, "line_items.0.sku", true},
		{kassa.EventOrderCompleted, "line_items.sku", false},
		{kassa.EventOrderCompleted, "tier", false},
		{kassa.EventCustomerUpdated, "preferences.milk", true},
		{kassa.EventCustomerUpdated, "deleted", true},
		{kassa.EventLoyaltyTierChanged, "tier", true},
		{kassa.EventInventoryLowStock, "on_hand", true},
		{kassa.EventAutomationTriggered, "payload.kind", true},
		{kassa.EventAutomationTriggered, "rule_id", true},
		{kassa.EventGiftCardRedeemed, "balance", true},
		{kassa.EventLaybyCreated, "id", false}, // registered only: no known fields
	} {
		if got := kassa.EventHasField(c.typ, c.path); got != c.ok {
			t.Errorf("%s %s: %v, want %v", c.typ, c.path, got, c.ok)
		}
	}
}

func TestConditionsHoldOnTheEventsData(t *testing.T) {
	data, err := kassa.DecodeData([]byte(`{"total": 1250, "status": "completed", "customer_id": null,
		"tags": ["vip", "staff"], "line_items": [{"sku": "LAT-1", "quantity": 2}], "completed_at": "2026-03-29T01:30:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	num := func(s string) any { var v any; json.Unmarshal([]byte(s), &v); return v }
	for _, c := range []struct {
		field, op string
		value     any
		want      bool
	}{
		{"total", "eq", num("1250"), true},
		{"total", "eq", num("1250.0"), true},
		{"total", "ne", num("1250"), false},
		{"total", "gt", num("1000"), true},
		{"total", "gte", num("1250"), true},
		{"total", "lt", num("1250"), false},
		{"total", "lte", num("1250"), true},
		{"total", "gt", "1000", false}, // a number is not ordered with a string
		{"status", "in", []any{"completed", "refunded"}, true},
		{"status", "in", []any{"open"}, false},
		{"status", "contains", "plete", true},
		{"tags", "contains", "vip", true},
		{"tags", "contains", "gold", false},
		{"line_items.0.sku", "eq", "LAT-1", true},
		{"line_items.1.sku", "eq", "LAT-1", false},
		{"line_items.0.quantity", "gte", num("2"), true},
		{"completed_at", "lt", "2026-03-29T02:00:00Z", true},
		{"customer_id", "exists", true, false}, // null is absent
		{"customer_id", "exists", false, true},
		{"notes", "exists", nil, false},
		{"notes", "ne", "x", true}, // a missing field differs from every value
		{"notes", "eq", nil, false},
	} {
		cond := kassa.Condition{Field: c.field, Operator: c.op, Value: c.value}
		if got := cond.Holds(data); got != c.want {
			t.Errorf("%s %s %v: %v, want %v", c.field, c.op, c.value, got, c.want)
		}
	}
	conds := []kassa.Condition{{Field: "total", Operator: "gt", Value: num("1000")}, {Field: "status", Operator: "eq", Value: "open"}}
	if kassa.Match(conds, data) || !kassa.Match(conds[:1], data) || !kassa.Match(nil, data) {
		t.Error("Match must need every condition")
	}
}

func TestActionParamsResolveFromTheData(t *testing.T) {
	data, _ := kassa.DecodeData([]byte(`{"customer_id": "c1", "depth": 1}`))
	a := kassa.Action{Type: kassa.ActionTagCustomer, Params: map[string]any{"customer_id": "$data.customer_id", "tag": "gold"}}
	p, err := a.ResolveParams(data)
	if err != nil || p["customer_id"] != "c1" || p["tag"] != "gold" {
		t.Fatalf("%v %v", p, err)
	}
	a.Params["customer_id"] = "$data.nobody"
	if _, err := a.ResolveParams(data); err == nil || !strings.Contains(err.Error(), "params.customer_id") {
		t.Fatalf("a missing ref: %v", err)
	}
	if d := kassa.TriggerDepth(kassa.EventAutomationTriggered, data); d != 2 {
		t.Fatalf("depth %d", d)
	}
	if d := kassa.TriggerDepth(kassa.EventOrderCreated, data); d != 0 {
		t.Fatalf("depth %d", d)
	}
}
