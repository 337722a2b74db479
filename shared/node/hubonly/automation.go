package hubonly

// The hub's automation engine and the automation service
// (kassa.AutomationService). docs/automations.md is the long form.
//
// One job ("automations", hub only) does two things on the node's clock:
//   - it reads the durable event log from its saved position (log_readers
//     row "automations") in batches of up to 100 events and runs the org's
//     active rules on each event's type; a batch's executions are recorded
//     with the new position in one unit, so an event sets a rule off once,
//     across restarts, also an edge's event (it is in the hub's log once);
//   - it fires schedule rules at their ticks (robfig/cron/v3 in the rule's
//     time zone): a tick is recorded with its execution, so a restart at
//     the tick does not fire it twice, and after downtime only the latest
//     missed tick fires, once.
//
// Actions run through the services, as the org's automation actor (no
// user; the rule is the client), one unit each; the executions are
// recorded after them. A crash between an action's commit and the record
// re-runs the batch's actions after the restart (at least once for
// actions, once for records). emit_event's automation.triggered is logged in the
// execution's own unit.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/robfig/cron/v3"

	"kassa.dev/shared/eventbus"
	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/sqlite"
)

// automationReader is the engine's row in log_readers.
const automationReader = "automations"

// automationPoll is the longest the job waits without looking at the log
// and the schedules: the clock may jump (a fake clock in tests).
const automationPoll = time.Second

// automationBatch is how many events the engine reads at once;
// automationIdleBatch how many it passes over at once while no rule of
// any org is triggered by an event (readLog).
const automationBatch, automationIdleBatch = 100, 2000

// maxMissedTicks bounds the walk to the latest missed tick after downtime.
const maxMissedTicks = 100000

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseCron parses a rule's cron expression in loc.
func parseCron(expr string, loc *time.Location) (cron.Schedule, error) {
	return cronParser.Parse("CRON_TZ=" + loc.String() + " " + expr)
}

func checkCron(expr string, loc *time.Location) (func(time.Time) time.Time, error) {
	s, err := parseCron(expr, loc)
	if err != nil {
		return nil, err
	}
	return s.Next, nil
}

func ruleSchedule(t kassa.Trigger) (cron.Schedule, error) {
	loc := time.UTC
	if t.Timezone != "" {
		l, err := time.LoadLocation(t.Timezone)
		if err != nil {
			return nil, err
		}
		loc = l
	}
	return parseCron(t.Cron, loc)
}

// onceADay is the schedule's Next without the repeat of a local time
// that the autumn change back brings (02:30 happens twice in Berlin on
// the last Sunday of October; robfig/cron fires both): a tick whose
// wall-clock time in the rule's zone equals the one it follows is
// skipped. The spring change skips a time that does not exist (02:30 on
// the last Sunday of March): that day has no tick (robfig/cron's way,
// documented in docs/automations.md).
func onceADay(s cron.Schedule, t kassa.Trigger) func(time.Time) time.Time {
	loc, err := time.LoadLocation(t.Timezone)
	if err != nil || t.Timezone == "" {
		loc = time.UTC
	}
	const wall = "2006-01-02 15:04:05"
	return func(from time.Time) time.Time {
		n := s.Next(from)
		if !n.IsZero() && n.In(loc).Format(wall) == from.In(loc).Format(wall) {
			n = s.Next(n)
		}
		return n
	}
}

// CampaignStatusFunc sets a campaign's status for set_campaign_status
// (wired when campaigns land; nil: the action fails saying so).
type CampaignStatusFunc func(ctx context.Context, campaignID, status string) error

type automationEngine struct {
	store *sqlite.AutomationStore
	svc   *httpapi.Services
	now   func() time.Time
	log   *slog.Logger
	kick  chan struct{}
	// SetCampaignStatus performs set_campaign_status.
	SetCampaignStatus CampaignStatusFunc
	// turn, on hubs sharing a PostgreSQL, lets one hub at a time run a
	// pass (the event log from the saved position, the schedules), so two
	// hubs never both run a rule for one event or tick (nil: always).
	turn automationTurn
}

// automationTurn is whose turn it is to run the engine's pass: Take says
// whether it is this hub's, and release ends the turn after the pass has
// recorded its position.
type automationTurn interface {
	Take(ctx context.Context) (release func(), mine bool, err error)
}

func newAutomationEngine(store *sqlite.AutomationStore, svc *httpapi.Services, now func() time.Time, log *slog.Logger) *automationEngine {
	return &automationEngine{store: store, svc: svc, now: now, log: log, kick: make(chan struct{}, 1)}
}

func (e *automationEngine) wake() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// job is the hub's automation engine; bus wakes it after a commit.
func (e *automationEngine) job(bus *eventbus.Bus) node.Job {
	return node.Job{Name: "automations", Run: func(ctx context.Context) error {
		sub := bus.Subscribe(256, nil)
		defer sub.Close()
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case _, ok := <-sub.C:
				if !ok || !drained(sub.C) {
					return nil
				}
			case <-e.kick:
			case <-t.C:
			}
			more, next, err := e.pass(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			wait := automationPoll
			if more {
				wait = 0
			} else if !next.IsZero() {
				wait = min(wait, max(next.Sub(e.now()), time.Millisecond))
			}
			t.Reset(wait)
		}
	}}
}

// pass reads one batch of the event log and runs the schedules due, when
// it is this hub's turn (a hub whose turn it is not waits for its next
// wake-up or poll: the holder reads the same log).
func (e *automationEngine) pass(ctx context.Context) (more bool, next time.Time, err error) {
	if e.turn != nil {
		release, mine, err := e.turn.Take(ctx)
		if err != nil || !mine {
			return false, time.Time{}, err
		}
		defer release()
	}
	if more, err = e.readLog(ctx); err != nil {
		return false, time.Time{}, err
	}
	next, err = e.runSchedules(ctx)
	return more, next, err
}

// drained takes every event already waiting in c, which one read of the
// log covers: a catch-up publishes an event per synced order, and the
// engine read the log once for each. False when c is closed.
func drained(c <-chan kassa.Event) bool {
	for {
		select {
		case _, ok := <-c:
			if !ok {
				return false
			}
		default:
			return true
		}
	}
}

// readLog runs the rules of one batch of events past the saved position
// and records all their executions with the batch's last position in one
// unit; more says a full batch was read. The rules of an org and type are
// read once a batch. While no org has an active rule triggered by an
// event (a hub's usual state, and a catch-up's thousands of synced
// events), it passes over automationIdleBatch events at a time, asking
// again after reading them: an event logged after a rule was made is
// always read by a batch that sees the rule.
func (e *automationEngine) readLog(ctx context.Context) (more bool, err error) {
	pos, idle, err := e.store.ReaderPositionIdle(ctx, automationReader)
	if err != nil {
		return false, err
	}
	limit := automationBatch
	if idle {
		limit = automationIdleBatch
	}
	evs, err := e.store.EventsAfter(ctx, pos, limit)
	if err != nil || len(evs) == 0 {
		return false, err
	}
	if idle {
		if idle, err = e.store.NoEventRules(ctx); err != nil {
			return false, err
		}
	}
	var recs []sqlite.ExecutionRecord
	if !idle {
		evs = evs[:min(len(evs), automationBatch)]
		if recs, err = e.fire(ctx, evs); err != nil {
			return false, err
		}
	}
	last := &sqlite.Position{Reader: automationReader, Seq: evs[len(evs)-1].Seq}
	if err := e.store.RecordExecution(context.WithoutCancel(ctx), last, recs...); err != nil {
		return false, err
	}
	return idle && len(evs) == automationIdleBatch || !idle && len(evs) == automationBatch, nil
}

// fire runs the rules each event triggers and returns their executions.
func (e *automationEngine) fire(ctx context.Context, evs []sqlite.LoggedEvent) ([]sqlite.ExecutionRecord, error) {
	type key struct{ org, typ string }
	rulesOf := map[key][]kassa.AutomationRule{}
	var recs []sqlite.ExecutionRecord
	for i := range evs {
		ev := &evs[i]
		k := key{ev.OrgID, ev.Type}
		rules, ok := rulesOf[k]
		if !ok {
			var err error
			if rules, err = e.store.RulesOn(ctx, ev.OrgID, ev.Type); err != nil {
				return nil, err
			}
			rulesOf[k] = rules
		}
		if len(rules) == 0 {
			continue
		}
		data, err := kassa.DecodeData(ev.Data.(json.RawMessage))
		if err != nil {
			data = map[string]any{}
		}
		for j := range rules {
			recs = append(recs, e.run(ctx, &rules[j], firing{trigger: kassa.TriggerEvent, event: ev.Type, eventID: ev.ID, at: ev.OccurredAt, data: data, depth: ev.Depth}))
		}
	}
	return recs, nil
}

// runSchedules fires each schedule rule whose next tick has come (once,
// for the latest tick due) and returns the earliest next tick.
func (e *automationEngine) runSchedules(ctx context.Context) (time.Time, error) {
	rules, err := e.store.ScheduledRules(ctx)
	if err != nil {
		return time.Time{}, err
	}
	now := e.now()
	var earliest time.Time
	for i := range rules {
		r := &rules[i]
		sched, err := ruleSchedule(r.Trigger)
		if err != nil {
			continue // validated at write; a zone database change could break one
		}
		from := r.LastTick
		if from.IsZero() {
			from = r.UpdatedAt
		}
		tick, next := kassa.DueTick(onceADay(sched, r.Trigger), from, now, maxMissedTicks)
		if !tick.IsZero() {
			rec := e.run(ctx, &r.AutomationRule, firing{trigger: kassa.TriggerSchedule, tick: tick, data: map[string]any{}})
			if err := e.store.RecordExecution(context.WithoutCancel(ctx), nil, rec); err != nil {
				return time.Time{}, err
			}
		}
		if !next.IsZero() && (earliest.IsZero() || next.Before(earliest)) {
			earliest = next
		}
	}
	return earliest, nil
}

// firing is what set a rule off.
type firing struct {
	trigger, event, eventID string
	tick                    time.Time
	at                      time.Time // when the event occurred (event triggers)
	data                    any
	depth                   int // the event's cause depth (LoggedEvent.Depth)
}

// run runs one rule on a firing and returns its execution (not recorded).
func (e *automationEngine) run(ctx context.Context, r *kassa.AutomationRule, f firing) sqlite.ExecutionRecord {
	began := time.Now()
	// Times as the store keeps them (UTC, milliseconds), so the event's data
	// equals the REST read of the execution.
	at := func() time.Time { return e.now().UTC().Truncate(time.Millisecond) }
	x := kassa.AutomationExecution{ID: e.store.NewID(), OrgID: r.OrgID, RuleID: r.ID, Trigger: f.trigger, Event: f.event,
		EventID: f.eventID, Depth: max(kassa.TriggerDepth(f.event, f.data), f.depth), Results: []kassa.ActionResult{}, StartedAt: at()}
	if !f.tick.IsZero() {
		tick := f.tick.UTC()
		x.Tick = &tick
	}
	var emit *kassa.AutomationTriggered
	switch {
	case x.Depth > kassa.MaxAutomationDepth:
		x.Status, x.Error = kassa.ExecutionSkipped, fmt.Sprintf("cut: depth %d is beyond the limit of %d automations setting each other off in a chain", x.Depth, kassa.MaxAutomationDepth)
	case !kassa.Match(r.Conditions, f.data):
		x.Status = kassa.ExecutionSkipped
	default:
		x.Matched, x.Status = true, kassa.ExecutionSucceeded
		// The events the actions' writes log set rules off one deeper.
		actx := kassa.WithCauseDepth(kassa.WithActor(ctx, AutomationActor(r)), x.Depth+1)
		for i, a := range r.Actions {
			res, payload := e.act(actx, &a, f.data, actionKey(r.ID, f, x, i))
			x.Results = append(x.Results, res)
			if !res.OK {
				x.Status, x.Error = kassa.ExecutionFailed, a.Type+": "+res.Error
				break
			}
			if a.Type == kassa.ActionEmitEvent {
				emit = &kassa.AutomationTriggered{Payload: payload}
			}
		}
	}
	x.FinishedAt = at()
	x.DurationMS = time.Since(began).Milliseconds()
	if emit != nil {
		emit.AutomationExecution = x
	}
	return sqlite.ExecutionRecord{AutomationExecution: x, Emit: emit}
}

// actionKey names one action of one rule set off by one cause: the event
// (by id) or the schedule's tick; a manual trigger is its own cause (the
// execution). The engine records a batch's executions after their
// actions, so a crash in between runs them again after the restart: an
// action that is not idempotent by itself (points) writes its entry under
// this key, once. The key is a UUIDv7 of the cause's time (the event's
// occurred_at, the tick, the execution's start) with the rest hashed from
// the rule, the cause and the action's index, so lists ordered by id
// (creation order) keep the entry in its place. Anyone who knows a rule's
// id can work the key out (edges see rule ids as the actor of change
// records, and pick their events' ids and times): the loyalty service
// takes an entry under it for the action's own only when it is what the
// action writes, made at this node (kassa.PointsRequest.EntryID).
func actionKey(ruleID string, f firing, x kassa.AutomationExecution, action int) string {
	cause, at := "execution:"+x.ID, x.StartedAt
	switch {
	case f.eventID != "":
		cause, at = "event:"+f.eventID, f.at
	case !f.tick.IsZero():
		cause, at = "tick:"+f.tick.UTC().Format(time.RFC3339Nano), f.tick
	}
	id := uuid.NewSHA1(uuid.NameSpaceURL, []byte(fmt.Sprintf("kassa:automation:%s:%s:%d", ruleID, cause, action)))
	ms := uint64(at.UnixMilli())
	for i := range 6 {
		id[i] = byte(ms >> (40 - 8*i))
	}
	id[6] = 0x70 | id[6]&0x0f // version 7; the variant bits are SHA1's (RFC 4122)
	return id.String()
}

// EventActionKey is the key (actionKey) of action number action of rule
// ruleID set off by the event eventID that occurred at occurredAt: the id
// of the ledger entry an award or a deduction writes (tests forge an
// edge's entry under it, as an edge could).
func EventActionKey(ruleID, eventID string, occurredAt time.Time, action int) string {
	return actionKey(ruleID, firing{eventID: eventID, at: occurredAt}, kassa.AutomationExecution{}, action)
}

// AutomationActor is who an automation's actions act as: the rule's org,
// no user, the rule as the client ("automation:<rule id>", what change
// records name), with a manager's scopes. The hub's own writes are not
// replayed through the edge trust checks, so no user is needed.
func AutomationActor(r *kassa.AutomationRule) *kassa.Actor {
	return &kassa.Actor{OrgID: r.OrgID, ClientID: "automation:" + r.ID, Scopes: kassa.RoleScopes(kassa.RoleManager)}
}

// act performs one action (key: actionKey); payload is emit_event's,
// performed by the execution's record.
func (e *automationEngine) act(ctx context.Context, a *kassa.Action, data any, key string) (kassa.ActionResult, map[string]any) {
	res := kassa.ActionResult{Type: a.Type}
	p, err := a.ResolveParams(data)
	if err != nil {
		res.Error = err.Error()
		return res, nil
	}
	var payload map[string]any
	res.Result, err = e.perform(ctx, a.Type, p, key)
	if a.Type == kassa.ActionEmitEvent {
		payload, _ = p["payload"].(map[string]any)
		if payload == nil {
			payload = map[string]any{}
		}
	}
	if err != nil {
		res.Error = clientMessage(err)
		return res, nil
	}
	res.OK = true
	return res, payload
}

// perform runs an action. Tagging, product and campaign states are
// idempotent by themselves (a second run finds them so); points are moved
// under the action's key (kassa.PointsRequest.EntryID), so a second run
// answers the first entry.
func (e *automationEngine) perform(ctx context.Context, typ string, p map[string]any, key string) (string, error) {
	str := func(k string) string { s, _ := p[k].(string); return s }
	switch typ {
	case kassa.ActionAwardPoints, kassa.ActionDeductPoints:
		acct, err := e.svc.Loyalty.FindAccountByCustomer(ctx, str("customer_id"))
		if err != nil {
			return "", err
		}
		pts, _ := p["points"].(float64)
		in := &kassa.PointsRequest{Points: int64(pts), Reason: str("reason"), EntryID: key}
		if in.Reason == "" {
			in.Reason = "automation"
		}
		var t *kassa.PointsTransaction
		if typ == kassa.ActionAwardPoints {
			t, err = e.svc.Loyalty.Earn(ctx, acct.ID, in)
		} else {
			t, err = e.svc.Loyalty.Redeem(ctx, acct.ID, in)
		}
		if err != nil {
			return "", err
		}
		return t.ID, nil
	case kassa.ActionTagCustomer, kassa.ActionUntagCustomer:
		c, err := e.svc.Customers.FindCustomerByID(ctx, str("customer_id"))
		if err != nil {
			return "", err
		}
		tag, tags := str("tag"), slices.Clone(c.Tags)
		if typ == kassa.ActionTagCustomer && !slices.Contains(tags, tag) {
			tags = append(tags, tag)
		} else if typ == kassa.ActionUntagCustomer {
			tags = slices.DeleteFunc(tags, func(s string) bool { return s == tag })
		}
		if slices.Equal(tags, c.Tags) {
			return c.ID, nil // already so: nothing changes, no event
		}
		_, err = e.svc.Customers.UpdateCustomer(ctx, c.ID, &kassa.CustomerUpdate{Tags: kassa.Some(tags)})
		return c.ID, err
	case kassa.ActionSetProductActive:
		active, _ := p["is_active"].(bool)
		pr, err := e.svc.Products.UpdateProduct(ctx, str("product_id"), &kassa.ProductUpdate{IsActive: kassa.Some(active)})
		if err != nil {
			return "", err
		}
		return pr.ID, nil
	case kassa.ActionSetCampaignStatus:
		if e.SetCampaignStatus == nil {
			return "", kassa.Errorf(kassa.EConflict, "campaigns are not available on this node")
		}
		return str("campaign_id"), e.SetCampaignStatus(ctx, str("campaign_id"), str("status"))
	case kassa.ActionEmitEvent:
		return kassa.EventAutomationTriggered, nil
	}
	return "", fmt.Errorf("unknown action %s", typ)
}

// clientMessage is an action's error as recorded: a kassa error's text,
// else a generic one (internal details stay in the log).
func clientMessage(err error) string {
	var ke *kassa.Error
	if errors.As(err, &ke) {
		if ke.Message != "" {
			return ke.Message
		}
		if len(ke.Fields) > 0 {
			return ke.Fields[0].Field + " " + ke.Fields[0].Message
		}
	}
	return "internal error"
}

// automationService is kassa.AutomationService: the store's rules and
// executions, validation with the cron parser, and the engine for manual
// triggers.
type automationService struct {
	*sqlite.AutomationStore
	engine *automationEngine
}

var _ kassa.AutomationService = (*automationService)(nil)

func (s *automationService) CreateAutomation(ctx context.Context, in *kassa.AutomationCreate) (*kassa.AutomationRule, error) {
	r := kassa.AutomationRule{Name: in.Name, IsActive: in.IsActive == nil || *in.IsActive, Trigger: in.Trigger,
		Conditions: in.Conditions, Actions: in.Actions}
	if err := r.Validate(checkCron); err != nil {
		return nil, err
	}
	out, err := s.AutomationStore.CreateAutomation(ctx, &r)
	if err == nil {
		s.engine.wake()
	}
	return out, err
}

func (s *automationService) UpdateAutomation(ctx context.Context, id string, in *kassa.AutomationUpdate) (*kassa.AutomationRule, error) {
	if !in.Name.Set && !in.IsActive.Set && !in.Trigger.Set && !in.Conditions.Set && !in.Actions.Set {
		return nil, kassa.InvalidField("", "give at least one of name, is_active, trigger, conditions, actions")
	}
	for _, f := range []struct {
		null bool
		name string
	}{{in.Name.Null, "name"}, {in.IsActive.Null, "is_active"}, {in.Trigger.Null, "trigger"}, {in.Actions.Null, "actions"}} {
		if f.null {
			return nil, kassa.InvalidField(f.name, "cannot be null")
		}
	}
	out, err := s.AutomationStore.UpdateAutomation(ctx, id, in, func(r *kassa.AutomationRule) error { return r.Validate(checkCron) })
	if err == nil {
		s.engine.wake()
	}
	return out, err
}

// TriggerAutomations runs the org's active rules on in.Event (or the one
// rule named) with in.Data, records and returns the executions. The event
// is not logged.
func (s *automationService) TriggerAutomations(ctx context.Context, in *kassa.AutomationTrigger) ([]kassa.AutomationExecution, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	var rules []kassa.AutomationRule
	if in.RuleID != "" {
		r, err := s.RuleByID(ctx, a.OrgID, in.RuleID)
		if err != nil {
			return nil, kassa.InvalidField("rule_id", "names no automation of this org")
		}
		rules = []kassa.AutomationRule{*r}
	} else if rules, err = s.RulesOn(ctx, a.OrgID, in.Event); err != nil {
		return nil, err
	}
	data := any(map[string]any(in.Data))
	if in.Data == nil {
		data = map[string]any{}
	}
	recs := make([]sqlite.ExecutionRecord, 0, len(rules))
	for i := range rules {
		recs = append(recs, s.engine.run(context.WithoutCancel(ctx), &rules[i], firing{trigger: kassa.TriggerManual, event: in.Event, data: data}))
	}
	if err := s.RecordExecution(context.WithoutCancel(ctx), nil, recs...); err != nil {
		return nil, err
	}
	out := make([]kassa.AutomationExecution, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.AutomationExecution)
	}
	return out, nil
}

// DefaultAutomationRetention is how long the hub keeps automation
// executions unless --automation-retention says otherwise.
const DefaultAutomationRetention = 30 * 24 * time.Hour

// automationRetentionEvery is how often the retention job runs.
const automationRetentionEvery = time.Hour
