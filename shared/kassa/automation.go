package kassa

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Automations (spec 4.4, issue 14): a rule reacts to an event of the
// catalog, a cron schedule or a manual trigger, checks conditions on the
// event's data and runs actions from a closed set. The rules of that —
// what a valid rule is, which fields an event's data has, how a condition
// is evaluated, how a parameter names a value of the event — are here;
// the store keeps rules and executions, the hub's engine (shared/node)
// runs them. docs/automations.md is the long form.

// Trigger types.
const (
	TriggerEvent    = "event"
	TriggerSchedule = "schedule"
	TriggerManual   = "manual"
)

// Condition operators.
const (
	OpEq       = "eq"
	OpNe       = "ne"
	OpGt       = "gt"
	OpGte      = "gte"
	OpLt       = "lt"
	OpLte      = "lte"
	OpIn       = "in"
	OpContains = "contains"
	OpExists   = "exists"
)

// Action types: the closed set an automation may do.
const (
	ActionAwardPoints       = "award_points"        // {customer_id, points, reason?}
	ActionDeductPoints      = "deduct_points"       // {customer_id, points, reason?}
	ActionTagCustomer       = "tag_customer"        // {customer_id, tag}
	ActionUntagCustomer     = "untag_customer"      // {customer_id, tag}
	ActionSetProductActive  = "set_product_active"  // {product_id, is_active}
	ActionSetCampaignStatus = "set_campaign_status" // {campaign_id, status}
	ActionEmitEvent         = "emit_event"          // {payload?}: automation.triggered
)

// Execution statuses: succeeded (matched, every action ran), failed
// (matched, an action failed), skipped (the conditions did not match, or
// the depth limit cut it).
const (
	ExecutionSucceeded = "succeeded"
	ExecutionFailed    = "failed"
	ExecutionSkipped   = "skipped"
)

// Automation limits.
const (
	MaxAutomationConditions = 20
	MaxAutomationActions    = 10
	MaxAutomationName       = 200
	// MaxAutomationDepth bounds a chain of rules set off by the events
	// of their actions (emit_event's automation.triggered, and any event
	// an action's write logs: WithCauseDepth): an execution beyond this
	// depth is skipped and says so.
	MaxAutomationDepth = 3
	// MaxAutomationRules is how many rules an org may have, active or
	// not: each is looked at on every event and every schedule tick.
	MaxAutomationRules = 200
	// MinScheduleInterval is the shortest time between two ticks of a
	// schedule trigger: a five-field cron runs at most once a minute, and
	// "@every" may not run more often.
	MinScheduleInterval = time.Minute
)

// DataRef is the prefix of an action parameter that takes its value from
// the event's data: "$data.customer_id" is the data's customer_id.
const DataRef = "$data."

// Trigger says what sets a rule off.
type Trigger struct {
	// Type is event, schedule or manual (only POST /automations/trigger).
	Type string `json:"type" openapi:"enum=TriggerType"`
	// Event is the event type of an event trigger: a logged type of the
	// catalog.
	Event string `json:"event,omitempty"`
	// Cron is a schedule trigger's five-field cron expression (minute hour
	// day-of-month month day-of-week; @daily and the like too).
	Cron string `json:"cron,omitempty"`
	// Timezone is the IANA zone the schedule runs in (default UTC).
	Timezone string `json:"timezone,omitempty"`
}

// Condition is a test on the event's data; all of a rule's must hold.
type Condition struct {
	// Field is a dotted path into the event's data (customer_id,
	// line_items.0.product_id); it must be a field of the event's data.
	Field string `json:"field"`
	// Operator is eq, ne, gt, gte, lt, lte, in (value is an array),
	// contains (a string's substring or an array's element) or exists
	// (value true or false; default true).
	Operator string `json:"operator" openapi:"enum=ConditionOperator"`
	// Value is what the field is compared with.
	Value any `json:"value"`
}

// Action is one thing a rule does.
type Action struct {
	// Type is one of the closed set (see docs/automations.md for params).
	Type string `json:"type" openapi:"enum=ActionType"`
	// Params are the action's parameters; a string "$data.<path>" takes the
	// value from the event's data.
	Params map[string]any `json:"params"`
}

// AutomationRule is an org's automation.
type AutomationRule struct {
	// ID is the rule's id.
	ID string `json:"id"`
	// OrgID is the org it belongs to.
	OrgID string `json:"org_id"`
	// Name says what it is for.
	Name string `json:"name"`
	// IsActive: only active rules run.
	IsActive bool `json:"is_active"`
	// Trigger says what sets it off.
	Trigger Trigger `json:"trigger"`
	// Conditions must all hold for the actions to run.
	Conditions []Condition `json:"conditions"`
	// Actions run in order; the first that fails stops the rest.
	Actions []Action `json:"actions"`
	// CreatedAt is when it was made.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updated_at"`
}

// AutomationCreate makes a rule.
type AutomationCreate struct {
	// Name says what it is for (1-200 characters).
	Name string `json:"name"`
	// IsActive: only active rules run (default true).
	IsActive *bool `json:"is_active"`
	// Trigger says what sets it off.
	Trigger Trigger `json:"trigger"`
	// Conditions must all hold (at most 20).
	Conditions []Condition `json:"conditions"`
	// Actions run in order (1-10).
	Actions []Action `json:"actions"`
}

// AutomationUpdate changes a rule; absent fields keep their value.
type AutomationUpdate struct {
	// Name says what it is for.
	Name Opt[string] `json:"name"`
	// IsActive: only active rules run.
	IsActive Opt[bool] `json:"is_active"`
	// Trigger says what sets it off.
	Trigger Opt[Trigger] `json:"trigger"`
	// Conditions must all hold.
	Conditions Opt[[]Condition] `json:"conditions"`
	// Actions run in order.
	Actions Opt[[]Action] `json:"actions"`
}

// Apply returns r changed by u (r is not modified).
func (u *AutomationUpdate) Apply(r AutomationRule) AutomationRule {
	u.Name.To(&r.Name)
	u.IsActive.To(&r.IsActive)
	u.Trigger.To(&r.Trigger)
	u.Conditions.To(&r.Conditions)
	u.Actions.To(&r.Actions)
	return r
}

// AutomationTrigger is the body of POST /automations/trigger: an event
// fired by hand, for testing. It is not logged (no webhook gets it); the
// matching rules' actions do run.
type AutomationTrigger struct {
	// Event is the event type, a logged type of the catalog.
	Event string `json:"event"`
	// Data is the event's data (the resource in its API shape).
	Data map[string]any `json:"data"`
	// RuleID, when given, runs only that rule (also a manual or a schedule
	// rule); otherwise every active rule on Event runs.
	RuleID string `json:"rule_id,omitempty"`
}

// ActionResult is what one action of an execution did.
type ActionResult struct {
	// Type is the action's type.
	Type string `json:"type" openapi:"enum=ActionType"`
	// OK: the action succeeded.
	OK bool `json:"ok"`
	// Result names what changed (the resource id), when it succeeded.
	Result string `json:"result,omitempty"`
	// Error says why it failed.
	Error string `json:"error,omitempty"`
}

// AutomationExecution is one run of a rule: what set it off, whether its
// conditions matched and what each action did.
type AutomationExecution struct {
	// ID is the execution's id.
	ID string `json:"id"`
	// OrgID is the rule's org.
	OrgID string `json:"org_id"`
	// RuleID is the rule that ran.
	RuleID string `json:"rule_id"`
	// Trigger is event, schedule or manual.
	Trigger string `json:"trigger" openapi:"enum=TriggerType"`
	// Event is the triggering event's type (event and manual triggers).
	Event string `json:"event,omitempty"`
	// EventID is the triggering event's id in the log (event triggers).
	EventID string `json:"event_id,omitempty"`
	// Tick is the schedule's tick that fired it (schedule triggers).
	Tick *time.Time `json:"tick,omitempty"`
	// Matched: the conditions held (and the depth limit did not cut it).
	Matched bool `json:"matched"`
	// Status is succeeded, failed or skipped.
	Status string `json:"status" openapi:"enum=ExecutionStatus"`
	// Depth is how many automation.triggered events led to it (0: none).
	Depth int `json:"depth"`
	// Results are the actions' outcomes, in order.
	Results []ActionResult `json:"results"`
	// Error says why it failed or was skipped.
	Error string `json:"error,omitempty"`
	// DurationMS is how long its actions took, in milliseconds.
	DurationMS int64 `json:"duration_ms"`
	// StartedAt is when it began.
	StartedAt time.Time `json:"started_at"`
	// FinishedAt is when its actions ended.
	FinishedAt time.Time `json:"finished_at"`
	// CreatedAt is when it was recorded (an automation.triggered event it
	// emitted occurred then).
	CreatedAt time.Time `json:"created_at"`
}

// AutomationService manages an org's automation rules (hub). Errors:
// EInvalid (bad body, an id of another org), ENotFound.
type AutomationService interface {
	FindAutomations(ctx context.Context, p Page) (List[AutomationRule], error)
	FindAutomationByID(ctx context.Context, id string) (*AutomationRule, error)
	CreateAutomation(ctx context.Context, in *AutomationCreate) (*AutomationRule, error)
	UpdateAutomation(ctx context.Context, id string, in *AutomationUpdate) (*AutomationRule, error)
	DeleteAutomation(ctx context.Context, id string) error
	// TriggerAutomations fires an event by hand and returns the executions.
	TriggerAutomations(ctx context.Context, in *AutomationTrigger) ([]AutomationExecution, error)
	// AutomationExecutions lists a page of a rule's executions, newest first.
	AutomationExecutions(ctx context.Context, id string, p Page) (List[AutomationExecution], error)
}

// CronParser parses a cron expression in a time zone and returns its
// schedule: next gives the first tick after a time. The node gives
// robfig/cron/v3's (the domain imports only the standard library).
type CronParser func(expr string, loc *time.Location) (next func(time.Time) time.Time, err error)

// Validate checks a rule, parsing its cron with parse.
func (r *AutomationRule) Validate(parse CronParser) error {
	var v Validation
	v.Check(r.Name != "" && ValidText(r.Name, MaxAutomationName), "name", "must be text of 1 to 200 characters")
	validTrigger(&v, &r.Trigger, parse)
	if len(r.Conditions) > MaxAutomationConditions {
		v.Add("conditions", "at most %d conditions", MaxAutomationConditions)
	}
	for i := range r.Conditions {
		validCondition(&v, fmt.Sprintf("conditions[%d]", i), &r.Conditions[i], r.Trigger)
	}
	if len(r.Actions) == 0 || len(r.Actions) > MaxAutomationActions {
		v.Add("actions", "must list 1 to %d actions", MaxAutomationActions)
	}
	for i := range r.Actions {
		validAction(&v, fmt.Sprintf("actions[%d]", i), &r.Actions[i], r.Trigger)
	}
	return v.Err()
}

// Validate checks a manual trigger's body.
func (in *AutomationTrigger) Validate() error {
	var v Validation
	v.Check(IsEventType(in.Event), "event", "must be a logged event type of the catalog")
	v.Check(in.RuleID == "" || ValidID(in.RuleID), "rule_id", "must be an id")
	return v.Err()
}

func validTrigger(v *Validation, t *Trigger, parse CronParser) {
	switch t.Type {
	case TriggerEvent:
		v.Check(IsEventType(t.Event), "trigger.event", "must be a logged event type of the catalog")
		v.Check(t.Cron == "" && t.Timezone == "", "trigger.cron", "only a schedule trigger has a cron and a timezone")
	case TriggerSchedule:
		v.Check(t.Event == "", "trigger.event", "a schedule trigger has no event")
		loc, ok := time.UTC, true
		if t.Timezone != "" {
			if ok = ValidTimezone(t.Timezone); ok {
				loc, _ = time.LoadLocation(t.Timezone)
			}
		}
		v.Check(ok, "trigger.timezone", "must be an IANA time zone")
		if t.Cron == "" || len(t.Cron) > 200 || strings.HasPrefix(t.Cron, "CRON_TZ=") || strings.HasPrefix(t.Cron, "TZ=") {
			v.Add("trigger.cron", "must be a cron expression (the zone goes in trigger.timezone)")
		} else if next, err := parse(t.Cron, loc); err != nil {
			v.Add("trigger.cron", "does not parse: %s", err)
		} else {
			v.Check(!tooFrequent(next), "trigger.cron", "must not run more often than once a minute")
		}
	case TriggerManual:
		v.Check(t.Event == "" && t.Cron == "" && t.Timezone == "", "trigger", "a manual trigger has no event, cron or timezone")
	default:
		v.Add("trigger.type", "must be event, schedule or manual")
	}
}

// scheduleProbe is when tooFrequent starts walking a schedule.
var scheduleProbe = time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)

// tooFrequent reports whether two of a schedule's first ticks are closer
// than MinScheduleInterval (only "@every" can be: a cron field's finest
// unit is the minute).
func tooFrequent(next func(time.Time) time.Time) bool {
	prev := next(scheduleProbe)
	for i := 0; i < 4 && !prev.IsZero(); i++ {
		t := next(prev)
		if !t.IsZero() && t.Sub(prev) < MinScheduleInterval {
			return true
		}
		prev = t
	}
	return false
}

func validCondition(v *Validation, at string, c *Condition, t Trigger) {
	switch {
	case c.Field == "" || len(c.Field) > 200:
		v.Add(at+".field", "must be a dotted path into the event's data")
	case t.Type != TriggerEvent:
		v.Add(at+".field", "only an event trigger has data to test")
	case !EventHasField(t.Event, c.Field):
		v.Add(at+".field", "the data of %s has no field %s", t.Event, c.Field)
	}
	switch c.Operator {
	case OpEq, OpNe:
	case OpGt, OpGte, OpLt, OpLte:
		_, num := c.Value.(float64)
		_, str := c.Value.(string)
		v.Check(num || str, at+".value", "must be a number or a string to order by")
	case OpIn:
		_, ok := c.Value.([]any)
		v.Check(ok, at+".value", "must be an array")
	case OpContains:
		v.Check(c.Value != nil, at+".value", "is required")
	case OpExists:
		_, ok := c.Value.(bool)
		v.Check(ok || c.Value == nil, at+".value", "must be true or false")
	default:
		v.Add(at+".operator", "must be one of eq, ne, gt, gte, lt, lte, in, contains, exists")
	}
}

// actionParams are each action's parameters: name → kind (id, string,
// int, bool), and whether it is required.
var actionParams = map[string]map[string]paramSpec{
	ActionAwardPoints:       {"customer_id": {"id", true}, "points": {"int", true}, "reason": {"string", false}},
	ActionDeductPoints:      {"customer_id": {"id", true}, "points": {"int", true}, "reason": {"string", false}},
	ActionTagCustomer:       {"customer_id": {"id", true}, "tag": {"string", true}},
	ActionUntagCustomer:     {"customer_id": {"id", true}, "tag": {"string", true}},
	ActionSetProductActive:  {"product_id": {"id", true}, "is_active": {"bool", true}},
	ActionSetCampaignStatus: {"campaign_id": {"id", true}, "status": {"string", true}},
	ActionEmitEvent:         {"payload": {"object", false}},
}

type paramSpec struct {
	kind     string
	required bool
}

// CampaignStatuses an action may set.
var automationCampaignStatuses = []string{"active", "paused", "ended"}

func validAction(v *Validation, at string, a *Action, t Trigger) {
	if a.Type == ActionAwardPoints && t.Type == TriggerEvent && t.Event == EventLoyaltyPointsEarned {
		// Its own points would set it off again, without end.
		v.Add(at+".type", "award_points on loyalty.points_earned would trigger itself without end")
		return
	}
	spec, ok := actionParams[a.Type]
	if !ok {
		v.Add(at+".type", "must be one of award_points, deduct_points, tag_customer, untag_customer, set_product_active, set_campaign_status, emit_event")
		return
	}
	for name := range a.Params {
		if _, ok := spec[name]; !ok {
			v.Add(at+".params."+name, "is not a parameter of %s", a.Type)
		}
	}
	for name, ps := range spec {
		val, present := a.Params[name]
		field := at + ".params." + name
		if !present || val == nil {
			v.Check(!ps.required, field, "is required")
			continue
		}
		if s, ok := val.(string); ok && strings.HasPrefix(s, DataRef) {
			path := strings.TrimPrefix(s, DataRef)
			v.Check(t.Type == TriggerEvent && EventHasField(t.Event, path), field, "names a field the trigger's event data lacks")
			continue
		}
		switch ps.kind {
		case "id":
			s, _ := val.(string)
			v.Check(ValidID(s), field, "must be an id or $data.<field>")
		case "string":
			s, _ := val.(string)
			v.Check(s != "" && ValidText(s, 200), field, "must be text of 1 to 200 characters")
			if name == "status" {
				v.Check(slices.Contains(automationCampaignStatuses, s), field, "must be active, paused or ended")
			}
		case "int":
			f, ok := val.(float64)
			v.Check(ok && f == float64(int64(f)) && f > 0 && f <= 1e9, field, "must be a positive whole number")
		case "bool":
			_, ok := val.(bool)
			v.Check(ok, field, "must be true or false")
		case "object":
			_, ok := val.(map[string]any)
			v.Check(ok, field, "must be an object")
		}
	}
}

// ActionIDs returns the literal ids the actions name (not $data refs),
// as "actions[i].params.name" → id, for the store's same-org check.
func (r *AutomationRule) ActionIDs() map[string]string {
	out := map[string]string{}
	for i, a := range r.Actions {
		for name, ps := range actionParams[a.Type] {
			if s, ok := a.Params[name].(string); ok && ps.kind == "id" && ValidID(s) {
				out[fmt.Sprintf("actions[%d].params.%s", i, name)] = s
			}
		}
	}
	return out
}

// eventDataTypes is the resource type of each emitted event's data (the
// catalog's Data column, in code): a condition's field must be one of its
// JSON fields. A type without one here (registered, not emitted) has no
// known fields, so no condition can be put on it.
var eventDataTypes = map[string]reflect.Type{
	EventOrderCreated:          reflect.TypeFor[Order](),
	EventOrderCompleted:        reflect.TypeFor[Order](),
	EventOrderRefunded:         reflect.TypeFor[Order](),
	EventPaymentCaptured:       reflect.TypeFor[Payment](),
	EventPaymentFailed:         reflect.TypeFor[Payment](),
	EventCustomerCreated:       reflect.TypeFor[Customer](),
	EventCustomerUpdated:       reflect.TypeFor[Customer](),
	EventInventoryLowStock:     reflect.TypeFor[StockLevel](),
	EventInventoryStockout:     reflect.TypeFor[StockLevel](),
	EventLoyaltyPointsEarned:   reflect.TypeFor[PointsTransaction](),
	EventLoyaltyTierChanged:    reflect.TypeFor[LoyaltyAccount](),
	EventInventoryTransferDone: reflect.TypeFor[Transfer](),
	EventGiftCardIssued:        reflect.TypeFor[GiftCard](),
	EventGiftCardRedeemed:      reflect.TypeFor[GiftCard](),
	EventProductCreated:        reflect.TypeFor[Product](),
	EventProductUpdated:        reflect.TypeFor[Product](),
	EventAutomationTriggered:   reflect.TypeFor[AutomationTriggered](),
	EventCampaignCreated:       reflect.TypeFor[Campaign](),
	EventCampaignUpdated:       reflect.TypeFor[Campaign](),
	EventCampaignLaunched:      reflect.TypeFor[Campaign](),
	EventCampaignPaused:        reflect.TypeFor[Campaign](),
	EventCampaignEnded:         reflect.TypeFor[Campaign](),
}

// AutomationTriggered is the data of an automation.triggered event: the
// execution that emitted it and the action's payload.
type AutomationTriggered struct {
	AutomationExecution
	// Payload is the emit_event action's payload (an object, may be empty).
	Payload map[string]any `json:"payload"`
}

// EventHasField reports whether path (dotted; a number steps into an
// array) is a field of the data of event type typ. Past an object-valued
// field with free keys (a map: preferences, payload) any path is allowed.
func EventHasField(typ, path string) bool {
	t, ok := eventDataTypes[typ]
	if !ok {
		return false
	}
	if typ == EventCustomerUpdated && path == "deleted" {
		return true // an erasure's flag
	}
	for _, seg := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map, reflect.Interface:
			return seg != ""
		case reflect.Slice, reflect.Array:
			if _, err := strconv.Atoi(seg); err != nil {
				return false
			}
			t = t.Elem()
		case reflect.Struct:
			f, ok := jsonField(t, seg)
			if !ok {
				return false
			}
			t = f
		default:
			return false
		}
	}
	return true
}

// jsonField finds the field of struct t whose JSON name is name, also in
// embedded structs.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if got, ok := jsonField(ft, name); ok {
					return got, true
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == name {
			if f.Type == reflect.TypeFor[time.Time]() {
				return reflect.TypeFor[string](), true
			}
			return f.Type, true
		}
	}
	return nil, false
}

// DataValue returns the value at path in data (decoded JSON: maps,
// slices, float64, string, bool, nil) and whether it is there.
func DataValue(data any, path string) (any, bool) {
	cur := data
	for _, seg := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// DecodeData decodes an event's data (JSON) for Match and DataValue.
func DecodeData(raw []byte) (any, error) {
	var v any
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	err := json.Unmarshal(raw, &v)
	return v, err
}

// Match reports whether every condition holds on data (decoded JSON).
// A missing field fails every operator but exists false and ne.
func Match(conds []Condition, data any) bool {
	for i := range conds {
		if !conds[i].Holds(data) {
			return false
		}
	}
	return true
}

// Holds reports whether the condition holds on data (decoded JSON).
func (c *Condition) Holds(data any) bool {
	got, ok := DataValue(data, c.Field)
	switch c.Operator {
	case OpExists:
		want, isBool := c.Value.(bool)
		if !isBool {
			want = true
		}
		return (ok && got != nil) == want
	case OpNe:
		return !ok || !sameJSON(got, c.Value)
	}
	if !ok {
		return false
	}
	switch c.Operator {
	case OpEq:
		return sameJSON(got, c.Value)
	case OpGt, OpGte, OpLt, OpLte:
		cmp, ok := order(got, c.Value)
		if !ok {
			return false
		}
		switch c.Operator {
		case OpGt:
			return cmp > 0
		case OpGte:
			return cmp >= 0
		case OpLt:
			return cmp < 0
		}
		return cmp <= 0
	case OpIn:
		set, _ := c.Value.([]any)
		return slices.ContainsFunc(set, func(x any) bool { return sameJSON(got, x) })
	case OpContains:
		switch g := got.(type) {
		case string:
			s, ok := c.Value.(string)
			return ok && strings.Contains(g, s)
		case []any:
			return slices.ContainsFunc(g, func(x any) bool { return sameJSON(x, c.Value) })
		}
	}
	return false
}

// sameJSON compares two decoded JSON values (numbers by value).
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// order compares two numbers, or two strings (RFC 3339 times in UTC order
// as strings).
func order(a, b any) (int, bool) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	}
	return 0, false
}

// ResolveParams returns a's params with every "$data.<path>" string
// replaced by the value at path in data. A path the data lacks is an
// error naming the parameter.
func (a *Action) ResolveParams(data any) (map[string]any, error) {
	out := make(map[string]any, len(a.Params))
	for k, v := range a.Params {
		if s, ok := v.(string); ok && strings.HasPrefix(s, DataRef) {
			got, ok := DataValue(data, strings.TrimPrefix(s, DataRef))
			if !ok || got == nil {
				return nil, fmt.Errorf("params.%s: the event's data has no %s", k, strings.TrimPrefix(s, DataRef))
			}
			v = got
		}
		out[k] = v
	}
	return out, nil
}

type causeDepthKey struct{}

// WithCauseDepth marks ctx as an automation action's, of an execution at
// depth-1: the events its writes log set rules off at depth.
func WithCauseDepth(ctx context.Context, depth int) context.Context {
	return context.WithValue(ctx, causeDepthKey{}, depth)
}

// CauseDepth is the depth WithCauseDepth gave ctx, 0 for none.
func CauseDepth(ctx context.Context) int {
	d, _ := ctx.Value(causeDepthKey{}).(int)
	return d
}

// TriggerDepth is the depth of an execution set off by an event of typ
// with data: one more than the emitting execution's for
// automation.triggered, else 0.
func TriggerDepth(typ string, data any) int {
	if typ != EventAutomationTriggered {
		return 0
	}
	d, _ := DataValue(data, "depth")
	f, _ := d.(float64)
	return int(f) + 1
}

// DueTick walks a schedule (next gives the first tick after a time) from
// the last fired tick (or the rule's start) to now: tick is the latest tick
// at or before now (zero: none due), next the first tick after now. Only
// the latest of several missed ticks fires, once. The walk stops after
// limit ticks (then the one reached fires).
func DueTick(next func(time.Time) time.Time, from, now time.Time, limit int) (tick, after time.Time) {
	t := next(from)
	for i := 0; i < limit && !t.IsZero() && !t.After(now); i++ {
		tick, t = t, next(t)
	}
	return tick, t
}
