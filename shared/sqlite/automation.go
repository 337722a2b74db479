package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
)

// Automation rules and their executions (migration 0012): hub only,
// node-local like webhooks (no change records; no edge can push them).
// The hub's engine (shared/node/hubonly/automation.go) reads the event log from a
// saved position (log_readers) and records each execution with the new
// position, the schedule's tick and any automation.triggered event in one
// unit (RecordExecution).

// AutomationStore keeps an org's automation rules and executions.
type AutomationStore struct{ db *DB }

// NewAutomationStore returns the automation store of db.
func NewAutomationStore(db *DB) *AutomationStore { return &AutomationStore{db: db} }

// NewID returns a fresh id (UUIDv7).
func (s *AutomationStore) NewID() string { return s.db.NewID() }

const ruleCols = `SELECT id, org_id, name, is_active, trigger, conditions, actions, created_at, updated_at FROM automation_rules`

func scanRule(s scanner) (*kassa.AutomationRule, error) {
	var r kassa.AutomationRule
	var trig, conds, acts, created, updated string
	if err := s.Scan(&r.ID, &r.OrgID, &r.Name, &r.IsActive, &trig, &conds, &acts, &created, &updated); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		raw string
		dst any
	}{{trig, &r.Trigger}, {conds, &r.Conditions}, {acts, &r.Actions}} {
		if err := json.Unmarshal([]byte(p.raw), p.dst); err != nil {
			return nil, err
		}
	}
	r.CreatedAt, r.UpdatedAt = parseTime(created), parseTime(updated)
	return &r, nil
}

func ruleID(r *kassa.AutomationRule) string { return r.ID }

func findRule(ctx context.Context, q querier, orgID, id string) (*kassa.AutomationRule, error) {
	return findByID(ctx, q, ruleCols, "automation", orgID, id, scanRule)
}

// FindAutomations lists the actor's org's rules.
func (s *AutomationStore) FindAutomations(ctx context.Context, p kassa.Page) (kassa.List[kassa.AutomationRule], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.AutomationRule]{}, err
	}
	return findPage(ctx, s.db.Reader, ruleCols, orgFilter(a.OrgID), p, scanRule, ruleID)
}

// FindAutomationByID returns one rule of the actor's org, or ENotFound.
func (s *AutomationStore) FindAutomationByID(ctx context.Context, id string) (*kassa.AutomationRule, error) {
	return readOwn(ctx, s.db, findRule, id)
}

// CreateAutomation stores r, which the caller validated, in the actor's
// org. Errors: EInvalid when an action names an id of another org, or
// when the org already has kassa.MaxAutomationRules rules.
func (s *AutomationStore) CreateAutomation(ctx context.Context, r *kassa.AutomationRule) (*kassa.AutomationRule, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	id := s.db.NewID()
	return writeRead(ctx, s.db, findRule, a.OrgID, id, func(tx *Tx) error {
		if err := checkRuleRoom(ctx, tx, a.OrgID); err != nil {
			return err
		}
		if err := checkActionIDs(ctx, tx, a.OrgID, r); err != nil {
			return err
		}
		trig, conds, acts, err := ruleJSON(r)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO automation_rules (id, org_id, name, is_active, trigger, event_type, conditions, actions, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, a.OrgID, r.Name, r.IsActive, trig, r.Trigger.Event, conds, acts, fmtTime(tx.Now), fmtTime(tx.Now))
		return err
	})
}

// checkRuleRoom refuses a new rule when the org has
// kassa.MaxAutomationRules already.
func checkRuleRoom(ctx context.Context, tx *Tx, orgID string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM automation_rules WHERE org_id = ?`, orgID).Scan(&n); err != nil {
		return err
	}
	if n >= kassa.MaxAutomationRules {
		msg := fmt.Sprintf("this org has %d automation rules, the most it may have: delete one first", kassa.MaxAutomationRules)
		return kassa.InvalidFields(msg, kassa.FieldError{Field: "", Message: msg})
	}
	return nil
}

// UpdateAutomation applies in to the rule and checks the result with
// validate, in one unit. Errors: ENotFound, EInvalid.
func (s *AutomationStore) UpdateAutomation(ctx context.Context, id string, in *kassa.AutomationUpdate, validate func(*kassa.AutomationRule) error) (*kassa.AutomationRule, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	return writeRead(ctx, s.db, findRule, a.OrgID, id, func(tx *Tx) error {
		old, err := findRule(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		r := in.Apply(*old)
		if err := validate(&r); err != nil {
			return err
		}
		if err := checkActionIDs(ctx, tx, a.OrgID, &r); err != nil {
			return err
		}
		trig, conds, acts, err := ruleJSON(&r)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE automation_rules SET name = ?, is_active = ?, trigger = ?, event_type = ?, conditions = ?, actions = ?, updated_at = ?
			WHERE org_id = ? AND id = ?`, r.Name, r.IsActive, trig, r.Trigger.Event, conds, acts, fmtTime(tx.Now), a.OrgID, id)
		if err != nil {
			return err
		}
		if r.Trigger != old.Trigger {
			// A new schedule counts its ticks from now, not from the old one's.
			_, err = tx.ExecContext(ctx, `DELETE FROM automation_ticks WHERE rule_id = ?`, id)
		}
		return err
	})
}

// DeleteAutomation removes a rule with its executions. Errors: ENotFound.
func (s *AutomationStore) DeleteAutomation(ctx context.Context, id string) error {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return err
	}
	return s.db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM automation_rules WHERE org_id = ? AND id = ?`, a.OrgID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return kassa.NotFound("automation", id)
		}
		for _, q := range []string{`DELETE FROM automation_executions WHERE rule_id = ?`, `DELETE FROM automation_ticks WHERE rule_id = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
}

func ruleJSON(r *kassa.AutomationRule) (trig, conds, acts string, err error) {
	if r.Conditions == nil {
		r.Conditions = []kassa.Condition{}
	}
	var out [3][]byte
	for i, v := range []any{r.Trigger, r.Conditions, r.Actions} {
		if out[i], err = json.Marshal(v); err != nil {
			return "", "", "", err
		}
	}
	return string(out[0]), string(out[1]), string(out[2]), nil
}

// actionTables: the table each id parameter of an action names.
var actionTables = map[string]string{"customer_id": "customers", "product_id": "products", "campaign_id": "campaigns"}

// checkActionIDs: every literal id an action names is a row of the org
// (422 naming the parameter otherwise, the same for another org's id and
// none). Every store has the three tables (migrations 0001, 0002, 0011), on
// SQLite and on PostgreSQL alike.
func checkActionIDs(ctx context.Context, tx *Tx, orgID string, r *kassa.AutomationRule) error {
	ids := r.ActionIDs()
	fields := make([]string, 0, len(ids))
	for f := range ids {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	var v kassa.Validation
	for _, f := range fields {
		table := actionTables[paramName(f)]
		if table == "" {
			continue
		}
		v.Check(exists(ctx, tx, table, orgID, ids[f]), f, "names no "+table[:len(table)-1]+" of this org")
	}
	return v.Err()
}

func paramName(field string) string {
	for i := len(field) - 1; i >= 0; i-- {
		if field[i] == '.' {
			return field[i+1:]
		}
	}
	return field
}

const executionCols = `SELECT id, org_id, rule_id, trigger, event_type, coalesce(event_id, ''), coalesce(tick, ''), matched, status, depth,
	results, error, duration_ms, started_at, finished_at, created_at FROM automation_executions`

func scanExecution(s scanner) (*kassa.AutomationExecution, error) {
	var e kassa.AutomationExecution
	var tick, results, started, finished, created string
	if err := s.Scan(&e.ID, &e.OrgID, &e.RuleID, &e.Trigger, &e.Event, &e.EventID, &tick, &e.Matched, &e.Status, &e.Depth,
		&results, &e.Error, &e.DurationMS, &started, &finished, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(results), &e.Results); err != nil {
		return nil, err
	}
	if tick != "" {
		t := parseTime(tick)
		e.Tick = &t
	}
	e.StartedAt, e.FinishedAt, e.CreatedAt = parseTime(started), parseTime(finished), parseTime(created)
	return &e, nil
}

// AutomationExecutions lists a page of a rule's executions, newest first
// (by id: UUIDv7, made when the run starts). Errors: ENotFound (also
// another org's rule), EBadRequest (a bad cursor).
func (s *AutomationStore) AutomationExecutions(ctx context.Context, id string, p kassa.Page) (kassa.List[kassa.AutomationExecution], error) {
	r, err := s.FindAutomationByID(ctx, id)
	if err != nil {
		return kassa.List[kassa.AutomationExecution]{}, err
	}
	f := orgFilter(r.OrgID).and("rule_id = ?", id)
	f.desc = true
	return findPage(ctx, s.db.Reader, executionCols, f, p, scanExecution, func(e *kassa.AutomationExecution) string { return e.ID })
}

// RulesOn returns the org's active rules triggered by events of type typ.
func (s *AutomationStore) RulesOn(ctx context.Context, orgID, typ string) ([]kassa.AutomationRule, error) {
	return s.rules(ctx, ruleCols+` WHERE org_id = ? AND event_type = ? AND is_active = 1 ORDER BY id`, orgID, typ)
}

// noEventRules holds when no org has an active rule triggered by events.
const noEventRules = `NOT EXISTS (SELECT 1 FROM automation_rules WHERE is_active = 1 AND event_type != '')`

// NoEventRules reports whether no org has an active rule triggered by
// events (the engine then passes over the log's events in bigger steps).
func (s *AutomationStore) NoEventRules(ctx context.Context) (bool, error) {
	var none bool
	err := s.db.Reader.QueryRowContext(ctx, `SELECT `+noEventRules).Scan(&none)
	return none, err
}

// ReaderPositionIdle returns a log reader's saved position (0: from the
// start) and NoEventRules, in one statement: the engine asks both at
// every pass, a round trip each on PostgreSQL.
func (s *AutomationStore) ReaderPositionIdle(ctx context.Context, name string) (seq int64, idle bool, err error) {
	err = s.db.Reader.QueryRowContext(ctx, `SELECT coalesce((SELECT seq FROM log_readers WHERE name = ?), 0), `+noEventRules, name).Scan(&seq, &idle)
	return seq, idle, err
}

// RuleByID returns a rule of org (active or not). Errors: ENotFound.
func (s *AutomationStore) RuleByID(ctx context.Context, orgID, id string) (*kassa.AutomationRule, error) {
	return findRule(ctx, s.db.Reader, orgID, id)
}

func (s *AutomationStore) rules(ctx context.Context, q string, args ...any) ([]kassa.AutomationRule, error) {
	rows, err := s.db.Reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []kassa.AutomationRule
	for rows.Next() {
		r, err := scanRule(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// ScheduledRule is an active schedule rule with its last fired tick (zero:
// none yet; the schedule then counts from the rule's last change).
type ScheduledRule struct {
	kassa.AutomationRule
	LastTick time.Time
}

// ScheduledRules returns every org's active schedule rules.
func (s *AutomationStore) ScheduledRules(ctx context.Context) ([]ScheduledRule, error) {
	rows, err := s.db.Reader.QueryContext(ctx, `SELECT r.id, r.org_id, r.name, r.is_active, r.trigger, r.conditions, r.actions, r.created_at, r.updated_at,
		coalesce(t.last_tick, '') FROM automation_rules r LEFT JOIN automation_ticks t ON t.rule_id = r.id
		WHERE r.is_active = 1 AND `+engine.D(s.db.Reader).JSONText("r.trigger", "type")+` = 'schedule' ORDER BY r.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ScheduledRule
	for rows.Next() {
		var sr ScheduledRule
		var last string
		r, err := scanRule(scannerFunc(func(dest ...any) error { return rows.Scan(append(dest, &last)...) }))
		if err != nil {
			return nil, err
		}
		sr.AutomationRule = *r
		if last != "" {
			sr.LastTick = parseTime(last)
		}
		out = append(out, sr)
	}
	return out, rows.Err()
}

type scannerFunc func(dest ...any) error

func (f scannerFunc) Scan(dest ...any) error { return f(dest...) }

// Rewind puts the log reader name back to just before the event eventID
// and deletes the executions of that event and of the events after it:
// the store as a crash leaves it between an engine batch's actions and
// its record (tests of what a re-run does).
func (s *AutomationStore) Rewind(ctx context.Context, name, eventID string) error {
	return s.db.Write(ctx, func(tx *Tx) error {
		var seq int64
		if err := tx.QueryRowContext(ctx, `SELECT seq FROM events WHERE id = ?`, eventID).Scan(&seq); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM automation_executions WHERE event_id IN (SELECT id FROM events WHERE seq >= ?)`, seq); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE log_readers SET seq = ? WHERE name = ?`, seq-1, name)
		return err
	})
}

// Backlog is how many events of the log reader name has yet to read.
func (s *AutomationStore) Backlog(ctx context.Context, name string) (int64, error) {
	var n int64
	err := s.db.Reader.QueryRowContext(ctx, `SELECT coalesce((SELECT max(seq) FROM events), 0) - coalesce((SELECT seq FROM log_readers WHERE name = ?), 0)`,
		name).Scan(&n)
	return n, err
}

// EventsAfter reads the event log (DB.EventsAfter).
func (s *AutomationStore) EventsAfter(ctx context.Context, after int64, limit int) ([]LoggedEvent, error) {
	return s.db.EventsAfter(ctx, after, limit)
}

// Position is a log reader's position to save with an execution.
type Position struct {
	Reader string
	Seq    int64
}

// RecordExecution records executions and moves a reader to pos (nil: no
// reader moves), in one unit, setting each one's CreatedAt: an execution
// already recorded for its rule and event or tick is not recorded again,
// and then nothing it would emit is either. A schedule execution saves
// its tick as the rule's last. An execution whose Emit is set logs
// automation.triggered (the execution as recorded, with the payload) in
// the same unit, so webhooks get it once.
func (s *AutomationStore) RecordExecution(ctx context.Context, pos *Position, execs ...ExecutionRecord) error {
	return s.db.Write(ctx, func(tx *Tx) error {
		var plain []*ExecutionRecord // neither a tick to save nor an event to emit
		for i := range execs {
			if execs[i].Tick != nil || execs[i].Emit != nil {
				if err := recordExecution(ctx, tx, &execs[i]); err != nil {
					return err
				}
			} else {
				plain = append(plain, &execs[i])
			}
		}
		for len(plain) > 0 {
			n := min(len(plain), executionInsertRows)
			if err := insertExecutions(ctx, tx, plain[:n]); err != nil {
				return err
			}
			plain = plain[n:]
		}
		if pos == nil {
			return nil
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO log_readers (name, seq) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET seq = excluded.seq WHERE excluded.seq > log_readers.seq`, pos.Reader, pos.Seq)
		return err
	})
}

// ExecutionRecord is an execution to record, with the event it emits.
type ExecutionRecord struct {
	kassa.AutomationExecution
	// Emit, when set, is the data of the automation.triggered event the
	// execution emits.
	Emit *kassa.AutomationTriggered
}

// executionInsertRows is how many executions one INSERT records (16
// parameters each): the engine records a row per rule and event, most of
// them skipped non-matches, and one statement per row was most of its
// cost.
const executionInsertRows = 64

const executionInsert = `INSERT INTO automation_executions (id, org_id, rule_id, trigger, event_type, event_id, tick, matched, status, depth,
	results, error, duration_ms, started_at, finished_at, created_at) VALUES `

const executionRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// executionArgs are an execution's column values, created at the unit's
// time, in executionInsert's order.
func executionArgs(tx *Tx, e *kassa.AutomationExecution) ([]any, error) {
	e.CreatedAt = tx.Now
	results, err := json.Marshal(e.Results)
	if err != nil {
		return nil, err
	}
	var eventID, tick any
	if e.EventID != "" {
		eventID = e.EventID
	}
	if e.Tick != nil {
		tick = fmtTime(*e.Tick)
	}
	return []any{e.ID, e.OrgID, e.RuleID, e.Trigger, e.Event, eventID, tick, e.Matched, e.Status, e.Depth, string(results), e.Error, e.DurationMS,
		fmtTime(e.StartedAt), fmtTime(e.FinishedAt), fmtTime(e.CreatedAt)}, nil
}

// insertExecutions records executions that neither save a tick nor emit,
// in one statement (already recorded ones are left as they are).
func insertExecutions(ctx context.Context, tx *Tx, rs []*ExecutionRecord) error {
	args := make([]any, 0, 16*len(rs))
	for _, r := range rs {
		a, err := executionArgs(tx, &r.AutomationExecution)
		if err != nil {
			return err
		}
		args = append(args, a...)
	}
	_, err := tx.ExecContext(ctx, executionInsert+strings.Repeat(executionRow+", ", len(rs)-1)+executionRow+` ON CONFLICT DO NOTHING`, args...)
	return err
}

func recordExecution(ctx context.Context, tx *Tx, r *ExecutionRecord) error {
	e := &r.AutomationExecution
	args, err := executionArgs(tx, e)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, executionInsert+executionRow+` ON CONFLICT DO NOTHING`, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	tick := args[6]
	if e.Tick != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO automation_ticks (rule_id, last_tick) VALUES (?, ?)
			ON CONFLICT (rule_id) DO UPDATE SET last_tick = excluded.last_tick`, e.RuleID, tick); err != nil {
			return err
		}
	}
	if r.Emit != nil {
		r.Emit.AutomationExecution = *e
		tx.Emit(e.OrgID, "", kassa.EventAutomationTriggered, r.Emit)
	}
	return nil
}

// ExecutionLags returns, for the org's executions set off by a logged
// event, the time from the event to the recorded execution (benchmarks).
func (s *AutomationStore) ExecutionLags(ctx context.Context, orgID string) ([]time.Duration, error) {
	rows, err := s.db.Reader.QueryContext(ctx, `SELECT x.created_at, e.occurred_at FROM automation_executions x
		JOIN events e ON e.id = x.event_id WHERE x.org_id = ?`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var rec, at string
		if err := rows.Scan(&rec, &at); err != nil {
			return nil, err
		}
		out = append(out, parseTime(rec).Sub(parseTime(at)))
	}
	return out, rows.Err()
}

// executionSweepBatch is how many executions one unit of the retention
// sweep deletes, so that the single writer is never held long.
const executionSweepBatch = 5000

// DeleteExecutionsBefore deletes the executions that started before
// cutoff, a batch per unit of work, and returns how many it deleted. It
// walks the table in seq order (the order executions are recorded, so
// the oldest first) and stops at the first execution that is young enough:
// no index on times is needed, and a sweep with nothing to delete reads
// one row. Execution history is node-local: nothing is replicated or
// logged.
func (s *AutomationStore) DeleteExecutionsBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for {
		var n int64
		err := s.db.Write(ctx, func(tx *Tx) error {
			res, err := tx.ExecContext(ctx, `DELETE FROM automation_executions WHERE seq IN (SELECT seq FROM automation_executions
				WHERE seq < coalesce((SELECT seq FROM automation_executions WHERE started_at >= ?1 ORDER BY seq LIMIT 1), 9223372036854775807)
				ORDER BY seq LIMIT ?2)`, fmtTime(cutoff), executionSweepBatch)
			if err == nil {
				n, err = res.RowsAffected()
			}
			return err
		})
		total += n
		if err != nil || n < executionSweepBatch {
			return total, err
		}
	}
}
