package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// The trust boundary (DESIGN.md, Sync, "Trust"): a store machine can be
// stolen or compromised, so the hub treats every change an edge pushes as
// untrusted input, like an HTTP body. Before a pushed change is merged,
// admit checks, in the unit of work that applies it:
//
//   - the entity is one an edge may write at all (its noun's edge rule,
//     registry.go): never orgs,
//     users (roles), locations, settings or anything hub-only;
//   - the operation and every field are allowed for the entity (inserts:
//     the table's columns; updates: the columns the API can change);
//   - the actor the change names is an active user of the org whose role
//     grants a scope that makes such a write (authorization replayed);
//     only a few node-made writes (forwarding offline card payments) carry
//     no actor;
//   - the row and every row it references belong to the edge's org, and
//     location-scoped rows (orders, payments, stock) to the edge's location;
//   - every field passes the same domain validation as an HTTP body, and
//     the arithmetic of order lines holds;
//   - derived fields (paid and refunded totals, on-hand, balances, tiers,
//     payments' refunded amounts, order totals) are recomputed after the
//     batch, never taken from the wire (apply.go, recompute).
//
// A refused change is a *Refusal: ApplyEach quarantines it with its reason
// code, counts it (RefusedCounts, kassa_sync_refused_total) and lists it
// as a "quarantined" conflict; it is never applied. A change that names a
// row this node does not have yet is out of order (retried), unless that
// row was itself quarantined, when it is refused too, so that the link
// never stalls behind a refused record.

// EdgeScope is who pushed a batch of changes: an enrolled edge's org,
// location and node.
type EdgeScope struct {
	OrgID, LocationID, NodeID string
}

// Refusal codes, the label of kassa_sync_refused_total.
const (
	RefusedEntity    = "refused_entity"    // hub-only data, or an operation the entity does not have
	RefusedField     = "refused_field"     // a field the edge may not write
	RefusedScope     = "refused_scope"     // another org's or location's row
	RefusedReference = "refused_reference" // a reference outside the scope, or to a quarantined row
	RefusedActor     = "refused_actor"     // no such active user, or a role without the scope
	RefusedValue     = "refused_value"     // a field fails domain validation
)

// RefusalCodes lists every refusal code.
var RefusalCodes = []string{RefusedEntity, RefusedField, RefusedScope, RefusedReference, RefusedActor, RefusedValue}

// Refusal is a pushed change the hub will not apply, and why.
type Refusal struct {
	Code   string
	Reason string
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Reason }

func refuse(code, format string, args ...any) error {
	return &Refusal{Code: code, Reason: fmt.Sprintf(format, args...)}
}

// refusedCounts counts refusals per code since the store opened.
type refusedCounts struct{ n [6]atomic.Int64 }

func (r *refusedCounts) add(code string) {
	if i := slices.Index(RefusalCodes, code); i >= 0 {
		r.n[i].Add(1)
	}
}

// RefusedCounts returns how many pushed changes were refused, per code,
// since the store opened.
func (db *DB) RefusedCounts() map[string]int64 {
	out := make(map[string]int64, len(RefusalCodes))
	for i, c := range RefusalCodes {
		out[c] = db.refused.n[i].Load()
	}
	return out
}

// SetUnderHub marks the store as an enrolled edge's: from then on its own
// writes of hub-only data (the org and its settings, users, locations)
// are refused with EConflict instead of being made here and refused at
// the hub.
func (db *DB) SetUnderHub() { db.underHub.Store(true) }

// locMode says how a row is tied to a location.
type locMode int

const (
	orgWide       locMode = iota
	ownLocation           // the row's location_id is the edge's
	orderLocation         // the row's order is at the edge's location
	transferEnds          // the edge's location is one end of the transfer
)

// ref is a column that names another row: a single id, a JSON list of ids
// (list), or a JSON list of objects holding the id under key.
type ref struct {
	col, table string
	list       bool
	key        string
}

// edgeRule is what an edge may write of one entity.
type edgeRule struct {
	loc    locMode
	update []string // columns an update may change; nil: no updates
	// once are the columns written only when the row is made (an insert
	// may carry any column of the table; an update none of these). Every
	// column of the table is in update, once or the replica's derived
	// columns (TestEveryColumnOfAnEdgeWritableTableHasAnAdmissionRule).
	once   []string
	scopes []kassa.Scope // the actor needs one of them
	// scopesOf, when set, picks the scopes by the record itself.
	scopesOf func(c *change.Change, f map[string]any) []kassa.Scope
	system   []string // update columns the node itself may write without an actor
	// anyUser: no scope is needed; an actor, when the record names one,
	// must be an active user of the org, and node-made records name none.
	anyUser bool
	refs    []ref
	check   func(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error
}

var (
	catalogWrite   = []kassa.Scope{kassa.ScopeCatalogWrite}
	saleWrite      = []kassa.Scope{kassa.ScopeOrdersWrite, kassa.ScopePaymentsWrite}
	paymentsWrite  = []kassa.Scope{kassa.ScopePaymentsWrite}
	loyaltyWrite   = []kassa.Scope{kassa.ScopeLoyaltyWrite, kassa.ScopeOrdersWrite}
	inventoryWrite = []kassa.Scope{kassa.ScopeInventoryWrite}
)

// admitter checks one batch's changes against the nouns' edge rules.
type admitter struct {
	tx      *Tx
	from    EdgeScope
	columns map[string][]string  // table → its columns
	actorOf *kassa.Actor         // the change being admitted: its actor as the hub knows it
	users   map[string]batchUser // actors read in this batch (org checked by the change's org, which is the edge's)
	// priced memoizes hubCampaigns per order: it runs in the batch's
	// recompute, after all its changes applied, once for the
	// redemptions and once for the discount check.
	priced map[string]kassa.CampaignPrice
}

// batchUser is an actor as the hub's users table has it, or an OAuth
// client of the org (client_credentials: no user) with its app's scopes.
type batchUser struct {
	role          string
	active, found bool
	client        bool
	scopes        []kassa.Scope
}

// admit refuses a change the edge may not make; fields are the change's
// values as the columns store them. A nil error admits it.
func (ad *admitter) admit(ctx context.Context, c *change.Change, r *noun, fields map[string]any) error {
	if r.edge == nil {
		return refuse(RefusedEntity, "%s is written at the hub only", c.Entity)
	}
	rule := *r.edge
	if c.OrgID != ad.from.OrgID {
		return refuse(RefusedScope, "change of org %s from an edge of org %s", c.OrgID, ad.from.OrgID)
	}
	if id, ok := fields["id"]; ok && id != c.EntityID {
		return refuse(RefusedField, "id %v differs from the change's row %s", id, c.EntityID)
	}
	if org, ok := fields[r.orgCol]; ok && org != c.OrgID {
		return refuse(RefusedScope, "%s %v differs from the change's org", r.orgCol, org)
	}
	existing, err := ad.existing(ctx, c, r)
	if err != nil {
		return err
	}
	switch c.Op {
	case change.OpInsert:
		if existing == nil {
			cols, err := ad.tableColumns(ctx, r.table)
			if err != nil {
				return err
			}
			for k := range fields {
				if !slices.Contains(cols, k) || k == "hlc" || k == "origin" || k == "field_hlc" {
					return refuse(RefusedField, "%s has no writable field %q", c.Entity, k)
				}
			}
			break
		}
		fallthrough // an insert of a row this node has merges as an update
	case change.OpUpdate:
		if rule.update == nil {
			return refuse(RefusedEntity, "%s rows are never changed once written", c.Entity)
		}
		for k := range fields {
			if k != "updated_at" && k != "id" && k != r.orgCol && !slices.Contains(rule.update, k) {
				return refuse(RefusedField, "an edge may not change %s.%s", c.Entity, k)
			}
		}
	default:
		return refuse(RefusedEntity, "%s of %s is not an operation edges make", c.Op, c.Entity)
	}
	if err := ad.location(ctx, c, rule, fields, existing); err != nil {
		return err
	}
	if err := ad.actor(ctx, c, rule, fields); err != nil {
		return err
	}
	for _, rf := range rule.refs {
		if err := ad.reference(ctx, c, rf, fields[rf.col]); err != nil {
			return err
		}
	}
	if rule.check != nil {
		return rule.check(ctx, ad, c, fields)
	}
	return nil
}

// existing returns the row's org and location columns as this node has
// them, or nil when it has no such row. A row of another org is refused;
// an update of a row this node has not got is out of order, or refused
// when the row was quarantined.
func (ad *admitter) existing(ctx context.Context, c *change.Change, r *noun) (map[string]any, error) {
	cols := "org_id"
	if r.orgCol == "id" {
		cols = "id"
	}
	switch r.edge.loc {
	case ownLocation:
		cols += ", location_id, ''"
	case transferEnds:
		cols += ", from_location_id, to_location_id"
	default:
		cols += ", '', ''"
	}
	var org, a, b string
	err := ad.tx.QueryRowContext(ctx, "SELECT "+cols+" FROM "+r.table+" WHERE id = ?", c.EntityID).Scan(&org, &a, &b)
	if errors.Is(err, sql.ErrNoRows) {
		if c.Op != change.OpInsert {
			if ad.quarantined(ctx, c.EntityID) {
				return nil, refuse(RefusedReference, "%s %s was quarantined", c.Entity, c.EntityID)
			}
			return nil, fmt.Errorf("%w: %s %s", ErrOutOfOrder, c.Entity, c.EntityID)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if org != c.OrgID {
		return nil, refuse(RefusedScope, "%s %s belongs to another org", c.Entity, c.EntityID)
	}
	return map[string]any{"location_id": a, "from_location_id": a, "to_location_id": b}, nil
}

// actor replays authorization: the change's actor must be an active user
// of the org whose role grants one of the rule's scopes. A change without
// an actor is the node's own work, allowed only for the rule's system columns.
func (ad *admitter) actor(ctx context.Context, c *change.Change, rule edgeRule, fields map[string]any) error {
	ad.actorOf = nil
	if c.Actor == "" {
		if rule.anyUser {
			return nil
		}
		if c.Op == change.OpUpdate && len(rule.system) > 0 {
			for k := range fields {
				if k != "updated_at" && !slices.Contains(rule.system, k) {
					return refuse(RefusedActor, "%s.%s changed without an actor", c.Entity, k)
				}
			}
			return nil
		}
		return refuse(RefusedActor, "%s %s without an actor", c.Op, c.Entity)
	}
	// Users are written at the hub only, so a batch cannot change them:
	// each actor is read once per batch.
	u, ok := ad.users[c.Actor]
	if !ok {
		err := ad.tx.QueryRowContext(ctx, `SELECT role, is_active FROM users WHERE id = ? AND org_id = ?`, c.Actor, c.OrgID).Scan(&u.role, &u.active)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		u.found = err == nil
		if !u.found {
			if u, err = ad.client(ctx, c); err != nil {
				return err
			}
		}
		if ad.users == nil {
			ad.users = map[string]batchUser{}
		}
		ad.users[c.Actor] = u
	}
	if !u.found {
		return refuse(RefusedActor, "actor %s is not a user of the org", c.Actor)
	}
	if !u.active {
		return refuse(RefusedActor, "actor %s is deactivated", c.Actor)
	}
	role := u.role
	ad.actorOf = &kassa.Actor{OrgID: c.OrgID, UserID: c.Actor, Role: kassa.Role(role), Scopes: kassa.RoleScopes(kassa.Role(role))}
	if u.client {
		ad.actorOf = &kassa.Actor{OrgID: c.OrgID, ClientID: c.Actor, Scopes: u.scopes}
		role = "client " + c.Actor
	}
	if rule.anyUser {
		return nil
	}
	scopes := rule.scopes
	if rule.scopesOf != nil {
		scopes = rule.scopesOf(c, fields)
	}
	for _, s := range ad.actorOf.Scopes {
		if slices.Contains(scopes, s) {
			return nil
		}
	}
	return refuse(RefusedActor, "a %s may not write %s", role, c.Entity)
}

// client reads an actor that is no user as an OAuth client of the org: a
// write made at the hub with a client_credentials token and routed to the
// store (a money operation) comes back with the client id as its actor.
// The app's registered scopes stand for the token's (a token never holds
// more); a deleted app is no actor. Apps are written at the hub only.
func (ad *admitter) client(ctx context.Context, c *change.Change) (batchUser, error) {
	var scopes string
	err := ad.tx.QueryRowContext(ctx, `SELECT scopes FROM oauth_apps WHERE id = ? AND org_id = ?`, c.Actor, c.OrgID).Scan(&scopes)
	if errors.Is(err, sql.ErrNoRows) {
		return batchUser{}, nil
	}
	if err != nil {
		return batchUser{}, err
	}
	u := batchUser{found: true, active: true, client: true}
	return u, decodeJSON(scopes, &u.scopes)
}

// location checks that a location-scoped row is the edge's location's.
func (ad *admitter) location(ctx context.Context, c *change.Change, rule edgeRule, fields, existing map[string]any) error {
	mine := ad.from.LocationID
	switch rule.loc {
	case ownLocation:
		if c.LocationID != mine {
			return refuse(RefusedScope, "%s of location %q from the edge of location %s", c.Entity, c.LocationID, mine)
		}
		if v, ok := fields["location_id"]; ok && v != mine {
			return refuse(RefusedScope, "location_id %v is not the edge's location", v)
		}
		if existing != nil && existing["location_id"] != mine {
			return refuse(RefusedScope, "%s %s is another location's", c.Entity, c.EntityID)
		}
		if c.Op == change.OpInsert && existing == nil && fields["location_id"] != mine {
			return refuse(RefusedField, "%s needs its location_id", c.Entity)
		}
	case orderLocation:
		if c.LocationID != mine {
			return refuse(RefusedScope, "%s of location %q from the edge of location %s", c.Entity, c.LocationID, mine)
		}
		if v, ok := fields["location_id"]; ok && v != mine {
			return refuse(RefusedScope, "location_id %v is not the edge's location", v)
		}
		order, _ := fields["order_id"].(string)
		if c.Op == change.OpInsert && order == "" {
			if c.Entity == "payment" && existing != nil {
				break
			}
			return refuse(RefusedField, "%s needs its order_id", c.Entity)
		}
		if order == "" {
			var loc string
			err := ad.tx.QueryRowContext(ctx, `SELECT location_id FROM `+edgeTable(c.Entity)+` WHERE id = ?`, c.EntityID).Scan(&loc)
			if err != nil {
				return err
			}
			if loc != mine {
				return refuse(RefusedScope, "%s %s is another location's", c.Entity, c.EntityID)
			}
			break
		}
		var loc string
		err := ad.tx.QueryRowContext(ctx, `SELECT location_id FROM orders WHERE id = ? AND org_id = ?`, order, c.OrgID).Scan(&loc)
		if err == nil && loc != mine {
			return refuse(RefusedScope, "order %s is another location's", order)
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		} // a missing order is the reference check's to judge
	case transferEnds:
		from, to := fields["from_location_id"], fields["to_location_id"]
		if existing != nil {
			from, to = existing["from_location_id"], existing["to_location_id"]
		}
		if existing == nil && from != mine {
			return refuse(RefusedScope, "a transfer is created at its source location, not %s", mine)
		}
		if from != mine && to != mine {
			return refuse(RefusedScope, "transfer %s is between other locations", c.EntityID)
		}
	}
	return nil
}

func edgeTable(entity string) string {
	if r, ok := nounOf(entity); ok {
		return r.table
	}
	return "orgs" // unreachable for entities with rules
}

// reference checks the rows a column names: each must belong to the org
// (a missing one is out of order, unless it was quarantined).
func (ad *admitter) reference(ctx context.Context, c *change.Change, rf ref, v any) error {
	var ids []string
	switch {
	case v == nil:
		return nil
	case rf.list || rf.key != "":
		s, ok := v.(string)
		if !ok {
			return refuse(RefusedValue, "%s must be a list", rf.col)
		}
		if rf.key == "" {
			if err := json.Unmarshal([]byte(s), &ids); err != nil {
				return refuse(RefusedValue, "%s must be a list of ids", rf.col)
			}
			break
		}
		var objs []map[string]any
		if err := json.Unmarshal([]byte(s), &objs); err != nil {
			return refuse(RefusedValue, "%s must be a list of objects", rf.col)
		}
		for _, o := range objs {
			id, ok := o[rf.key].(string)
			if !ok {
				return refuse(RefusedValue, "%s: every entry needs %s", rf.col, rf.key)
			}
			ids = append(ids, id)
		}
	default:
		s, ok := v.(string)
		if !ok {
			return refuse(RefusedValue, "%s must be an id", rf.col)
		}
		ids = []string{s}
	}
	for _, id := range ids {
		if !kassa.ValidID(id) {
			return refuse(RefusedValue, "%s: %q is not an id", rf.col, id)
		}
		var org string
		err := ad.tx.QueryRowContext(ctx, "SELECT org_id FROM "+rf.table+" WHERE id = ?", id).Scan(&org)
		if errors.Is(err, sql.ErrNoRows) {
			if ad.quarantined(ctx, id) {
				return refuse(RefusedReference, "%s names %s, which was quarantined", rf.col, id)
			}
			if rf.table == "locations" {
				return refuse(RefusedReference, "%s names an unknown location %s", rf.col, id)
			}
			return fmt.Errorf("%w: %s %s named by %s", ErrOutOfOrder, rf.table, id, rf.col)
		}
		if err != nil {
			return err
		}
		if org != c.OrgID {
			return refuse(RefusedReference, "%s names %s of another org", rf.col, id)
		}
	}
	return nil
}

func (ad *admitter) quarantined(ctx context.Context, entityID string) bool {
	var n int
	ad.tx.QueryRowContext(ctx, `SELECT count(*) FROM sync_quarantine WHERE entity_id = ?`, entityID).Scan(&n)
	return n > 0
}

// tableColumns returns a table's columns (cached per batch).
func (ad *admitter) tableColumns(ctx context.Context, table string) ([]string, error) {
	if cols, ok := ad.columns[table]; ok {
		return cols, nil
	}
	rows, err := ad.tx.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		cols = append(cols, n)
	}
	if ad.columns == nil {
		ad.columns = map[string][]string{}
	}
	ad.columns[table] = cols
	return cols, rows.Err()
}

// asInput decodes a change's fields into an API input struct, so that the
// API's own Validate judges them. Column values that are JSON text (lists,
// objects) are decoded first.
func asInput(f map[string]any, into any) error {
	m := make(map[string]any, len(f))
	for k, v := range f {
		if s, ok := v.(string); ok && len(s) > 0 && (s[0] == '[' || s[0] == '{') {
			var j any
			if json.Unmarshal([]byte(s), &j) == nil {
				m[k] = j
				continue
			}
		}
		if i, ok := v.(int64); ok && (k == "is_active" || k == "required") {
			m[k] = i != 0
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(b, into)
	}
	if err != nil {
		return refuse(RefusedValue, "fields of the wrong type: %v", err)
	}
	return nil
}

// validated turns a domain validation error into a refusal.
func validated(err error) error {
	if err == nil {
		return nil
	}
	var ke *kassa.Error
	if errors.As(err, &ke) && len(ke.Fields) > 0 {
		return refuse(RefusedValue, "%s %s", ke.Fields[0].Field, ke.Fields[0].Message)
	}
	return refuse(RefusedValue, "%v", err)
}

// checkAs validates an insert with the create input's rules and an update
// with the update input's.
func checkAs[C interface{ Validate() error }, U interface{ Validate() error }](c *change.Change, f map[string]any, create C, update U) error {
	if c.Op == change.OpInsert {
		if err := asInput(f, create); err != nil {
			return err
		}
		return validated(create.Validate())
	}
	if err := asInput(f, update); err != nil {
		return err
	}
	return validated(update.Validate())
}

func checkCategory(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	return checkAs(c, f, &kassa.CategoryCreate{}, &kassa.CategoryUpdate{})
}

func checkProduct(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	return checkAs(c, f, &kassa.ProductCreate{}, &kassa.ProductUpdate{})
}

func checkModifierGroup(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	return checkAs(c, f, &kassa.ModifierGroupCreate{}, &kassa.ModifierGroupUpdate{})
}

func checkPriceList(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	return checkAs(c, f, &kassa.PriceListCreate{}, &kassa.PriceListUpdate{})
}

func checkProgram(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	in := &kassa.LoyaltyProgramCreate{}
	if err := asInput(f, in); err != nil {
		return err
	}
	if c.Op == change.OpInsert {
		return validated(in.Validate())
	}
	return nil
}

func checkCustomer(_ context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if _, erased := f["deleted_at"]; erased {
		return nil // an erasure blanks the fields; there is nothing to validate
	}
	now := ad.tx.now
	if c.Op == change.OpInsert {
		in := &kassa.CustomerCreate{}
		if err := asInput(f, in); err != nil {
			return err
		}
		return validated(in.Validate(now))
	}
	in := &kassa.CustomerUpdate{}
	if err := asInput(f, in); err != nil {
		return err
	}
	return validated(in.Validate(now))
}

// Bounds on the numbers a pushed record may carry are the API's
// (kassa/money.go), so that every sum of them stays far from overflowing.
const (
	maxQuantity = kassa.MaxLineQuantity
	maxAmount   = kassa.MaxMoney
	maxPoints   = 1_000_000_000
)

func intField(f map[string]any, k string) (int64, bool) {
	v, ok := f[k].(int64)
	return v, ok
}

// within refuses field k unless it is an integer in [lo, hi]; absent is
// allowed unless required.
func within(f map[string]any, k string, lo, hi int64, required bool) error {
	v, present := f[k]
	if !present || v == nil {
		if required {
			return refuse(RefusedValue, "%s is required", k)
		}
		return nil
	}
	n, ok := v.(int64)
	if !ok || n < lo || n > hi {
		return refuse(RefusedValue, "%s must be a whole number from %d to %d", k, lo, hi)
	}
	return nil
}

// oneOf refuses field k unless it is one of the values (absent is allowed
// unless required).
func oneOf(f map[string]any, k string, required bool, values ...string) error {
	v, present := f[k]
	if !present || v == nil {
		if required {
			return refuse(RefusedValue, "%s is required", k)
		}
		return nil
	}
	if s, ok := v.(string); !ok || !slices.Contains(values, s) {
		return refuse(RefusedValue, "%s must be one of %v", k, values)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

var (
	orderStates   = []string{kassa.OrderOpen, kassa.OrderCompleted, kassa.OrderPartiallyRefunded, kassa.OrderRefunded, kassa.OrderCancelled}
	kitchenStates = []string{kassa.KitchenNew, kassa.KitchenInProgress, kassa.KitchenReady, kassa.KitchenServed}
	paymentStates = []string{kassa.PaymentPending, kassa.PaymentAuthorized, kassa.PaymentCaptured, kassa.PaymentVoided,
		kassa.PaymentFailed, kassa.PaymentRefunded, kassa.PaymentPartiallyRefunded}
	paymentMethods = []string{string(kassa.PaymentCash), string(kassa.PaymentCard), string(kassa.PaymentGiftCard), string(kassa.PaymentExternal)}
)

func checkOrder(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	insert := c.Op == change.OpInsert
	if insert {
		if s, _ := f["status"].(string); s != kassa.OrderOpen {
			return refuse(RefusedValue, "an order is created open, not %q", s)
		}
		if cur, _ := f["currency"].(string); !kassa.ValidCurrency(cur) {
			return refuse(RefusedValue, "currency must be an ISO 4217 code")
		}
		if n, _ := f["number"].(string); !kassa.ValidText(n, 64) || n == "" {
			return refuse(RefusedValue, "number must be a short text")
		}
	}
	if n, ok := f["notes"].(string); ok && !kassa.ValidText(n, 2000) {
		return refuse(RefusedValue, "notes must be text of at most 2000 characters")
	}
	return firstErr(
		oneOf(f, "status", insert, orderStates...),
		oneOf(f, "kitchen_status", false, kitchenStates...),
		oneOf(f, "channel", insert, kassa.ChannelPOS, kassa.ChannelOnline, kassa.ChannelPartner),
		within(f, "tax_rate_bps", 0, kassa.MaxTaxRateBps, insert),
		within(f, "tax_inclusive", 0, 1, insert),
		within(f, "subtotal", 0, maxAmount, insert),
		within(f, "discount_total", 0, maxAmount, insert),
		within(f, "tax_total", 0, maxAmount, insert),
		within(f, "total", 0, maxAmount, insert),
		within(f, "loyalty_points_earned", 0, maxPoints, false),
		appliedCampaigns(f),
	)
}

// appliedCampaigns refuses an order's campaigns field unless it is a JSON
// list of what campaigns gave it (kassa.AppliedCampaign): at most one per
// line and two more (pricing's stacking), each naming a campaign once,
// with amounts in range. The hub derives the order's redemptions from it
// (redeemAtHub), with its own amounts.
func appliedCampaigns(f map[string]any) error {
	v, present := f["campaigns"]
	if !present {
		return nil
	}
	s, _ := v.(string)
	var cs []kassa.AppliedCampaign
	if !strings.HasPrefix(strings.TrimSpace(s), "[") || json.Unmarshal([]byte(s), &cs) != nil || len(cs) > kassa.MaxOrderLines+2 {
		return refuse(RefusedValue, "campaigns must be a list of at most %d applied campaigns", kassa.MaxOrderLines+2)
	}
	seen := make(map[string]bool, len(cs))
	for _, c := range cs {
		if c.CampaignID == "" || !kassa.ValidText(c.CampaignID, 64) || seen[c.CampaignID] || !kassa.ValidText(c.Name, 200) ||
			c.Amount < 0 || c.Amount > maxAmount || c.PointsMultiplier < 0 || c.PointsMultiplier > kassa.MaxPointsMultiplier {
			return refuse(RefusedValue, "campaigns: each names a campaign once, with amount 0-%d and points_multiplier 0-%d", maxAmount, kassa.MaxPointsMultiplier)
		}
		seen[c.CampaignID] = true
	}
	return nil
}

// checkOrderLine checks a line's arithmetic against its order's tax
// settings: gross = (unit price + modifier adjustments) × quantity, the
// discount within the gross, tax and total as pricing computes them.
func checkOrderLine(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if err := firstErr(within(f, "quantity", 1, maxQuantity, true), within(f, "unit_price", 0, maxAmount, true),
		within(f, "discount", 0, maxAmount, true), within(f, "tax", 0, maxAmount, true), within(f, "total", 0, maxAmount, true),
		within(f, "position", 0, 10000, true)); err != nil {
		return err
	}
	var mods []struct {
		PriceAdjustment int64 `json:"price_adjustment"`
	}
	if s, ok := f["modifiers"].(string); ok {
		if err := json.Unmarshal([]byte(s), &mods); err != nil || len(mods) > kassa.MaxLineModifiers {
			return refuse(RefusedValue, "modifiers must be a list of at most %d options", kassa.MaxLineModifiers)
		}
	}
	unit, _ := intField(f, "unit_price")
	for _, m := range mods {
		if m.PriceAdjustment < -maxAmount || m.PriceAdjustment > maxAmount {
			return refuse(RefusedValue, "a modifier's price_adjustment is out of range")
		}
		unit += m.PriceAdjustment
	}
	qty, _ := intField(f, "quantity")
	gross := unit * qty
	if unit < 0 || gross > maxAmount {
		return refuse(RefusedValue, "the line's gross is out of range")
	}
	discount, _ := intField(f, "discount")
	if discount > gross {
		return refuse(RefusedValue, "the discount %d exceeds the line's gross %d", discount, gross)
	}
	var rate int64
	var inclusive bool
	order, _ := f["order_id"].(string)
	if err := ad.tx.QueryRowContext(ctx, `SELECT tax_rate_bps, tax_inclusive FROM orders WHERE id = ?`, order).Scan(&rate, &inclusive); err != nil {
		return err // the reference check found the order
	}
	priced, err := kassa.Price([]kassa.PricedLine{{Unit: unit, Quantity: qty, Discount: &kassa.Discount{Type: "amount", Value: discount}}}, nil, int(rate), inclusive)
	if err != nil {
		return validated(err)
	}
	want := priced.Lines[0]
	tax, _ := intField(f, "tax")
	total, _ := intField(f, "total")
	if tax != want.Tax || total != want.Total {
		return refuse(RefusedValue, "tax %d and total %d do not follow from the line (tax %d, total %d)", tax, total, want.Tax, want.Total)
	}
	return nil
}

func checkHistory(_ context.Context, _ *admitter, _ *change.Change, f map[string]any) error {
	return oneOf(f, "status", true, orderStates...)
}

func checkPayment(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	insert := c.Op == change.OpInsert
	if err := firstErr(
		within(f, "amount", 1, maxAmount, insert),
		within(f, "tendered", 0, maxAmount, false),
		within(f, "change_due", 0, maxAmount, false),
		within(f, "offline", 0, 1, false),
		oneOf(f, "method", insert, paymentMethods...),
		oneOf(f, "status", insert, paymentStates...),
	); err != nil || insert {
		return err
	}
	return stillOffline(ctx, ad, c, f)
}

// stillOffline refuses an update that unmarks a payment taken offline: a
// processor's outcome may mark one offline (a terminal that fell back to
// store-and-forward), never the reverse, which would hide it from the
// store's offline limits.
func stillOffline(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	v, ok := f["offline"].(int64)
	if !ok || v == 1 {
		return nil
	}
	var was int64
	err := ad.tx.QueryRowContext(ctx, `SELECT offline FROM payments WHERE id = ? AND org_id = ?`, c.EntityID, c.OrgID).Scan(&was)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if was == 1 {
		return refuse(RefusedValue, "payment %s was taken offline and stays so", c.EntityID)
	}
	return nil
}

func checkRefund(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if err := firstErr(within(f, "amount", 1, maxAmount, true), within(f, "restock", 0, 1, false)); err != nil {
		return err
	}
	var paid []struct {
		PaymentID string `json:"payment_id"`
		Amount    int64  `json:"amount"`
	}
	if s, ok := f["payments"].(string); ok {
		if err := json.Unmarshal([]byte(s), &paid); err != nil {
			return refuse(RefusedValue, "payments must be a list of {payment_id, amount}")
		}
	}
	order, _ := f["order_id"].(string)
	// The refund limit, replayed: a cashier's refunds of one order together
	// stay within the org's limit (kassa.CheckRefund).
	var refunded int64
	if err := ad.tx.QueryRowContext(ctx, `SELECT coalesce(sum(amount), 0) FROM refunds WHERE order_id = ? AND org_id = ?`, order, c.OrgID).Scan(&refunded); err != nil {
		return err
	}
	settings, err := orgSettings(ctx, ad.tx, c.OrgID)
	if err != nil {
		return err
	}
	amount, _ := intField(f, "amount")
	if err := kassa.CheckRefund(ad.actorOf, settings.RefundLimit, refunded, amount); err != nil {
		return refuse(RefusedActor, "%v", err)
	}
	for _, p := range paid {
		var n int
		if err := ad.tx.QueryRowContext(ctx, `SELECT count(*) FROM payments WHERE id = ? AND order_id = ? AND org_id = ?`,
			p.PaymentID, order, c.OrgID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return refuse(RefusedReference, "the refund names payment %s, which is not one of order %s", p.PaymentID, order)
		}
		if p.Amount < 0 || p.Amount > maxAmount {
			return refuse(RefusedValue, "a refunded payment amount is out of range")
		}
	}
	return nil
}

func checkMovement(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	reasons := append(slices.Clone(kassa.AdjustReasons), kassa.ReasonSale, kassa.ReasonRefund, kassa.ReasonTransferOut, kassa.ReasonTransferIn)
	if err := firstErr(within(f, "delta", -maxQuantity, maxQuantity, true), oneOf(f, "reason", true, reasons...),
		oneOf(f, "ref_type", true, "order", "refund", "transfer", "adjustment")); err != nil {
		return err
	}
	if f["delta"] == int64(0) {
		return refuse(RefusedValue, "a movement moves stock")
	}
	if a, ok := f["actor"]; ok && a != nil && a != c.Actor {
		return refuse(RefusedField, "the movement's actor is not the change's")
	}
	return nil
}

// movementScopes: a sale or a refund moves stock as part of the order;
// adjustments and transfers are inventory writes.
func movementScopes(_ *change.Change, f map[string]any) []kassa.Scope {
	switch f["reason"] {
	case kassa.ReasonSale, kassa.ReasonRefund:
		return saleWrite
	}
	return inventoryWrite
}

// levelScopes: a sale creates the level of a product it is the first to
// move; its reorder point is an inventory write.
func levelScopes(c *change.Change, _ map[string]any) []kassa.Scope {
	if c.Op == change.OpInsert {
		return []kassa.Scope{kassa.ScopeInventoryWrite, kassa.ScopeOrdersWrite}
	}
	return inventoryWrite
}

// orderScopes: the kitchen moves an order's kitchen_status and nothing
// else; every other change of an order is a sale's.
func orderScopes(c *change.Change, f map[string]any) []kassa.Scope {
	if c.Op == change.OpUpdate {
		kitchenOnly := true
		for k := range f {
			if k != "kitchen_status" && k != "updated_at" {
				kitchenOnly = false
			}
		}
		if kitchenOnly {
			return []kassa.Scope{kassa.ScopeKDS, kassa.ScopeOrdersWrite}
		}
	}
	return saleWrite
}

func checkStockLevel(_ context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if c.Op == change.OpInsert {
		product, _ := f["product_id"].(string)
		if c.EntityID != levelKeyID(ad.from.LocationID, product) {
			return refuse(RefusedValue, "a stock level's id is derived from its location and product")
		}
	}
	return within(f, "reorder_point", 0, maxQuantity, false)
}

func checkPoints(_ context.Context, _ *admitter, _ *change.Change, f map[string]any) error {
	if err := firstErr(oneOf(f, "type", true, "earn", "redeem", "adjust"), within(f, "points", -maxPoints, maxPoints, true)); err != nil {
		return err
	}
	p, _ := intField(f, "points")
	switch f["type"] {
	case "earn":
		if p <= 0 {
			return refuse(RefusedValue, "earned points are positive")
		}
	case "redeem":
		if p >= 0 {
			return refuse(RefusedValue, "redeemed points are negative")
		}
	}
	return nil
}

// checkGiftCard: a card is created active with a code of the alphabet,
// a currency and an initial amount within the money limits; an update
// may only disable it (its balance is derived: recomputed, not taken).
func checkGiftCard(_ context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if _, ok := f["status"]; ok && !kassa.MayIssueGiftCards(ad.actorOf) {
		return refuse(RefusedActor, "only a manager, an owner or a partner app issues or disables gift cards")
	}
	if c.Op != change.OpInsert {
		return oneOf(f, "status", false, kassa.GiftCardDisabled)
	}
	code, _ := f["code"].(string)
	if norm, ok := kassa.NormalizeGiftCardCode(code); !ok || norm != code {
		return refuse(RefusedValue, "code must be %d characters of the gift card alphabet", kassa.GiftCardCodeLen)
	}
	if cur, _ := f["currency"].(string); !kassa.ValidCurrency(cur) {
		return refuse(RefusedValue, "currency must be an ISO 4217 code")
	}
	if at, ok := f["expires_at"].(string); ok {
		if _, err := time.Parse(TimeFormat, at); err != nil {
			return refuse(RefusedValue, "expires_at %q is not a time", at)
		}
	}
	return firstErr(oneOf(f, "status", true, kassa.GiftCardActive), within(f, "initial_amount", 1, maxAmount, true))
}

// giftCardScopes: a card's balance moves with a sale's payment (and is
// recomputed, not taken); issuing or disabling one is a payments write.
func giftCardScopes(c *change.Change, f map[string]any) []kassa.Scope {
	if c.Op == change.OpUpdate {
		if _, ok := f["status"]; !ok {
			return saleWrite
		}
	}
	return paymentsWrite
}

// giftCardTxnScopes: issuing a card is a payments write (it sells stored
// value); a redeem or refund moves with a sale's payment.
func giftCardTxnScopes(_ *change.Change, f map[string]any) []kassa.Scope {
	if f["type"] == string(kassa.GiftCardTxnIssue) {
		return paymentsWrite
	}
	return saleWrite
}

// checkGiftCardTxn: an edge moves a card's money only as its API does.
// An issue credits the card's initial amount once. A redeem debits a
// gift_card payment of the edge's location by exactly its amount, once
// per payment; a refund credits one back, never more in all than the
// payment took, to the card it came from. Balances are not checked: a redeem beyond the merged
// balance was taken offline and is recorded as gift_card_overdrawn.
func checkGiftCardTxn(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	types := []string{string(kassa.GiftCardTxnIssue), string(kassa.GiftCardTxnRedeem), string(kassa.GiftCardTxnRefund)}
	if err := firstErr(oneOf(f, "type", true, types...), within(f, "amount", -maxAmount, maxAmount, true)); err != nil {
		return err
	}
	amount, _ := intField(f, "amount")
	card, _ := f["gift_card_id"].(string)
	typ, _ := f["type"].(string)
	var n int64
	if typ == string(kassa.GiftCardTxnIssue) {
		if !kassa.MayIssueGiftCards(ad.actorOf) {
			return refuse(RefusedActor, "only a manager, an owner or a partner app issues gift cards")
		}
		var initial int64
		if err := ad.tx.QueryRowContext(ctx, `SELECT initial_amount, (SELECT count(*) FROM gift_card_transactions WHERE gift_card_id = ?1 AND type = 'issue')
			FROM gift_cards WHERE id = ?1 AND org_id = ?2`, card, c.OrgID).Scan(&initial, &n); err != nil {
			return err // the reference check found the card
		}
		if amount != initial || n > 0 {
			return refuse(RefusedValue, "a card is issued once, with its initial_amount %d", initial)
		}
		return nil
	}
	payment, _ := f["payment_id"].(string)
	var order, loc, method string
	var paid int64
	err := ad.tx.QueryRowContext(ctx, `SELECT order_id, location_id, method, amount FROM payments WHERE id = ? AND org_id = ?`,
		payment, c.OrgID).Scan(&order, &loc, &method, &paid)
	if errors.Is(err, sql.ErrNoRows) {
		return refuse(RefusedReference, "a gift card %s needs the gift_card payment it belongs to", typ)
	}
	if err != nil {
		return err
	}
	switch {
	case loc != ad.from.LocationID:
		return refuse(RefusedScope, "payment %s is another location's", payment)
	case method != string(kassa.PaymentGiftCard):
		return refuse(RefusedValue, "payment %s is not a gift_card payment", payment)
	case f["order_id"] != order:
		return refuse(RefusedValue, "order_id is not payment %s's order", payment)
	}
	var moved int64
	if err := ad.tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(amount), 0) FROM gift_card_transactions WHERE payment_id = ? AND type = ?`,
		payment, typ).Scan(&n, &moved); err != nil {
		return err
	}
	if typ == string(kassa.GiftCardTxnRedeem) {
		if amount != -paid || n > 0 {
			return refuse(RefusedValue, "a redeem debits its payment's amount %d, once", paid)
		}
		// A card pays only in its own currency (kassa.GiftCard.Redeemable).
		// Its status and expiry are the edge's account of the moment: a card
		// disabled at the hub while the store was offline still paid there.
		var same bool
		if err := ad.tx.QueryRowContext(ctx, `SELECT g.currency = o.currency FROM gift_cards g, orders o
			WHERE g.id = ? AND g.org_id = ?2 AND o.id = ? AND o.org_id = ?2`, card, c.OrgID, order).Scan(&same); err != nil {
			return err
		}
		if !same {
			return refuse(RefusedValue, "card %s is in another currency than order %s", card, order)
		}
		return nil
	}
	if amount <= 0 || moved+amount > paid {
		return refuse(RefusedValue, "refunds of payment %s return at most its amount %d", payment, paid)
	}
	// The card gets back only what the payment gave back, as the hub
	// holds it: its whole amount once voided while its order was not
	// completed (the API voids only then), else its parts of the order's
	// refunds (each admitted by checkRefund, with the refund limits; an
	// edge writes the refund before the card's entry). Without this a
	// forged entry refilled a card while the sale stood.
	returned, err := paymentReturned(ctx, ad.tx, c.OrgID, payment)
	if err != nil {
		return err
	}
	if moved+amount > returned {
		return refuse(RefusedValue, "payment %s gave back %d, not %d: no refund or void covers this entry", payment, returned, moved+amount)
	}
	var from string
	if err := ad.tx.QueryRowContext(ctx, `SELECT gift_card_id FROM gift_card_transactions WHERE payment_id = ? AND type = 'redeem'`,
		payment).Scan(&from); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if from != card {
		return refuse(RefusedValue, "a refund returns to the card payment %s was redeemed from", payment)
	}
	return nil
}

// paymentReturned is what a payment gave back as q holds it: its amount
// when voided on an order not completed, else the sum of its parts of its
// order's refunds.
func paymentReturned(ctx context.Context, q querier, orgID, paymentID string) (int64, error) {
	var returned int64
	err := q.QueryRowContext(ctx, `SELECT CASE WHEN p.status = 'voided' AND o.status IN ('open', 'cancelled') THEN p.amount
			ELSE (SELECT coalesce(sum(json_extract(j.value, '$.amount')), 0) FROM refunds r, json_each(r.payments) j
				WHERE r.order_id = p.order_id AND r.org_id = p.org_id AND json_extract(j.value, '$.payment_id') = p.id) END
		FROM payments p JOIN orders o ON o.id = p.order_id AND o.org_id = p.org_id WHERE p.id = ? AND p.org_id = ?`, paymentID, orgID).Scan(&returned)
	return returned, err
}

func checkTransfer(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	if c.Op == change.OpInsert {
		in := &kassa.TransferCreate{}
		if err := asInput(f, in); err != nil {
			return err
		}
		if err := validated(in.Validate()); err != nil {
			return err
		}
		if s, _ := f["status"].(string); s != "in_transit" {
			return refuse(RefusedValue, "a transfer is created in transit")
		}
		return nil
	}
	return oneOf(f, "status", false, "received", "cancelled")
}

// campaignPart is the campaigns' part of an edge order's discount as the
// hub computes it (hubCampaigns). The wire's campaign amounts are not
// believed: whatever discount they do not explain counts as manual.
func (ad *admitter) campaignPart(ctx context.Context, orderID, orgID string) (int64, error) {
	cp, err := ad.hubCampaigns(ctx, orderID, orgID)
	return campaignTotal(cp), err
}

// redeemAtHub writes an edge order's redemptions (redeem) with the
// amounts the hub computes its campaigns gave the order (hubCampaigns; 0
// for a campaign that gave it nothing here) and the order's total as the
// hub recomputed it: the hub's analytics and usage limits count no
// discount an edge's wire merely claims. An order that claims no campaign
// is left alone, and so is one whose lines have not come yet: they arrive
// later in the log, and the order is recomputed then (its rows take the
// new amounts).
func (a *applier) redeemAtHub(ctx context.Context, orderID, orgID string) error {
	var claims bool
	err := a.tx.QueryRowContext(ctx, `SELECT campaigns != '[]' AND EXISTS (SELECT 1 FROM order_lines WHERE order_id = ?1 AND org_id = ?2)
		FROM orders WHERE id = ?1 AND org_id = ?2`, orderID, orgID).Scan(&claims)
	if err != nil || !claims {
		return err
	}
	cp, err := a.admitter.hubCampaigns(ctx, orderID, orgID)
	if err != nil {
		return err
	}
	gave := make(map[string]int64, len(cp.Applied))
	for _, c := range cp.Applied {
		gave[c.CampaignID] = c.Amount
	}
	return a.redeem(ctx, orderID, orgID, gave)
}

// hubCampaigns recomputes at the hub what campaigns gave an order an edge
// pushed: the hub's campaigns, as they stood when the order was taken
// (occurred_at, campaignsAt), that applied at its location then, priced
// on its lines with its voucher (without it when no campaign here had the
// code).
func (ad *admitter) hubCampaigns(ctx context.Context, orderID, orgID string) (kassa.CampaignPrice, error) {
	if cp, ok := ad.priced[orderID]; ok {
		return cp, nil
	}
	cp, err := ad.priceCampaigns(ctx, orderID, orgID)
	if err == nil {
		if ad.priced == nil {
			ad.priced = map[string]kassa.CampaignPrice{}
		}
		ad.priced[orderID] = cp
	}
	return cp, err
}

// priceCampaigns is hubCampaigns without its memo.
func (ad *admitter) priceCampaigns(ctx context.Context, orderID, orgID string) (kassa.CampaignPrice, error) {
	var locID, occurred string
	var voucher, customer sql.Null[string]
	var discount int64
	var claimedJSON string
	if err := ad.tx.QueryRowContext(ctx, `SELECT location_id, occurred_at, voucher_code, customer_id, discount_total, campaigns FROM orders WHERE id = ? AND org_id = ?`,
		orderID, orgID).Scan(&locID, &occurred, &voucher, &customer, &discount, &claimedJSON); err != nil {
		return kassa.CampaignPrice{}, err
	}
	loc, err := findLocation(ctx, ad.tx, orgID, locID)
	if err != nil {
		return kassa.CampaignPrice{}, err
	}
	rows, err := ad.tx.QueryContext(ctx, `SELECT l.product_id, l.unit_price, l.modifiers, l.quantity, coalesce(p.category_id, '')
		FROM order_lines l LEFT JOIN products p ON p.id = l.product_id AND p.org_id = l.org_id WHERE l.order_id = ? ORDER BY l.position`, orderID)
	if err != nil {
		return kassa.CampaignPrice{}, err
	}
	var lines []kassa.CampaignLine
	for rows.Next() {
		var l kassa.CampaignLine
		var mods string
		if err := rows.Scan(&l.ProductID, &l.Unit, &mods, &l.Quantity, &l.CategoryID); err != nil {
			rows.Close()
			return kassa.CampaignPrice{}, err
		}
		var ms []kassa.LineModifier
		_ = json.Unmarshal([]byte(mods), &ms) // checked by checkOrderLine
		for _, m := range ms {
			l.Unit = kassa.UnitPrice(l.Unit, m.PriceAdjustment)
		}
		lines = append(lines, l)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return kassa.CampaignPrice{}, err
	}
	// The campaigns as they stood here when the order was made (its
	// occurred_at, not in the future), from the unit's own view: a
	// campaign paused or changed since prices the order as it did then.
	// The wire's occurred_at is RFC 3339 at any precision (a real edge
	// sends milliseconds); one that is no time is taken as now, which a
	// forged edge could name anyway.
	at, err := time.Parse(time.RFC3339Nano, occurred)
	if err != nil {
		at = ad.tx.now
	}
	price := func(at time.Time) (kassa.CampaignPrice, error) {
		live, err := ad.tx.db.campaignsAt(ctx, ad.tx, orgID, at, ad.tx.now)
		if err != nil {
			return kassa.CampaignPrice{}, err
		}
		cp, err := orderCampaigns(ctx, ad.tx, live, orgID, loc, at, nullPtr(customer), lines, nullPtr(voucher), false)
		if kassa.ErrorKind(err) == kassa.EInvalid {
			cp, err = orderCampaigns(ctx, ad.tx, live, orgID, loc, at, nil, lines, nil, false)
		}
		return cp, err
	}
	cp, err := price(at)
	// An edge's clock may run behind the hub's by as much as the hub
	// lets an edge's stamps run ahead of it (Options.MaxSkew): a sale made
	// just after a launch can be dated just before it. When the campaigns
	// as they stood then do not explain the order's discount, the
	// campaigns as they stood that much later (not after now) count, if
	// they explain more — but only campaigns the order claims to have
	// had (its campaigns list; the ids only, never the wire's amounts),
	// and never more than its discount: a campaign launched in that
	// window that the till never applied does not hide a manual discount.
	// A forged edge gains at most a campaign launched or raised within
	// that window after the instant it names, and only by claiming it.
	if later := earlier(at.Add(ad.tx.db.maxSkew), ad.tx.now); err == nil && later.After(at) && campaignTotal(cp) < discount {
		if cp2, err2 := price(later); err2 == nil && campaignTotal(cp2) > campaignTotal(cp) && campaignTotal(cp2) <= discount &&
			claimsAll(claimedJSON, cp2.Applied) {
			cp = cp2
		}
	}
	return cp, err
}

// claimsAll reports whether an order's campaigns list (the wire's JSON)
// names every campaign of applied.
func claimsAll(claimedJSON string, applied []kassa.AppliedCampaign) bool {
	var claimed []kassa.AppliedCampaign
	if json.Unmarshal([]byte(claimedJSON), &claimed) != nil {
		return false
	}
	for _, a := range applied {
		if !slices.ContainsFunc(claimed, func(c kassa.AppliedCampaign) bool { return c.CampaignID == a.CampaignID }) {
			return false
		}
	}
	return true
}

// campaignTotal is what campaigns take off an order's lines.
func campaignTotal(cp kassa.CampaignPrice) int64 {
	var sum int64
	for _, d := range cp.LineTotals {
		sum += d
	}
	return sum
}

// checkDiscount replays the discount permission on an order pushed by an
// edge, once its lines are in: the manual discounts of the order together
// stay within what its creator's role may give (kassa.CheckDiscount). The
// campaigns' part is recomputed here (campaignPart) and does not count.
func (ad *admitter) checkDiscount(ctx context.Context, orderID, orgID string) error {
	var subtotal, discount int64
	var creator sql.NullString
	err := ad.tx.QueryRowContext(ctx, `SELECT subtotal, discount_total, created_by FROM orders
		WHERE id = ?1 AND org_id = ?2 AND EXISTS (SELECT 1 FROM order_lines WHERE order_id = ?1 AND org_id = ?2)`,
		orderID, orgID).Scan(&subtotal, &discount, &creator)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // no lines yet: the totals are the wire's, recomputed once they come
	}
	if err != nil || discount == 0 {
		return err
	}
	a := &kassa.Actor{OrgID: orgID}
	var role string
	err = ad.tx.QueryRowContext(ctx, `SELECT role FROM users WHERE id = ? AND org_id = ?`, creator.String, orgID).Scan(&role)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	a.UserID, a.Role = creator.String, kassa.Role(role)
	if role == "" {
		a.Role = kassa.RoleCashier // an order of nobody the hub knows: the strictest limit
	}
	settings, err := orgSettings(ctx, ad.tx, orgID)
	if err != nil {
		return err
	}
	campaigns, err := ad.campaignPart(ctx, orderID, orgID)
	if err != nil {
		return err
	}
	if err := kassa.CheckDiscount(a, settings.DiscountLimits, subtotal, max(0, discount-campaigns)); err != nil {
		return refuse(RefusedActor, "%v", err)
	}
	return nil
}

// checkEvent admits an edge's business event: made at that edge (its
// origin), about the edge's org (admit) and its location or the org as a
// whole, of a type in the catalog, occurred at a valid time, with data
// that is a JSON object of at most kassa.MaxEventData bytes. It does not
// tie the event to the change that caused it: an edge can still invent an
// event about its own location (docs/trust.md, open points).
func checkEvent(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if c.Origin != ad.from.NodeID {
		return refuse(RefusedScope, "event %s from node %s pushed by edge %s", c.EntityID, c.Origin, ad.from.NodeID)
	}
	if _, ok := f["seq"]; ok {
		return refuse(RefusedField, "event has no writable field \"seq\"")
	}
	if loc := f["location_id"]; loc != nil && loc != ad.from.LocationID {
		return refuse(RefusedScope, "event of location %v from the edge of location %s", loc, ad.from.LocationID)
	}
	if loc, _ := f["location_id"].(string); c.LocationID != loc {
		return refuse(RefusedScope, "event's location %q differs from its record's %q", loc, c.LocationID)
	}
	if typ, _ := f["type"].(string); !kassa.IsEventType(typ) {
		return refuse(RefusedValue, "event type %v is not in the catalog", f["type"])
	}
	at, _ := f["occurred_at"].(string)
	if _, err := time.Parse(TimeFormat, at); err != nil {
		return refuse(RefusedValue, "occurred_at %q is not a time", at)
	}
	data, _ := f["data"].(string)
	if len(data) > kassa.MaxEventData {
		return refuse(RefusedValue, "event data of %d bytes exceeds %d", len(data), kassa.MaxEventData)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(data), &obj); err != nil {
		return refuse(RefusedValue, "event data is not a JSON object")
	}
	typ, _ := f["type"].(string)
	return ad.eventSubject(ctx, typ, obj)
}

// eventSubject is the row an edge's event of a type is about: its data is
// that row in its API shape, and an edge logs the event in the unit that
// wrote the row, so the row comes first in its push. table holds it,
// atLocation says it belongs to one location (the edge's), and same are
// the columns that never change once written, which the event's data must
// give as the hub holds them. A noun registers the events about its rows
// (noun.events; register fills in table); an edge that pushes an event of
// a type no noun registers (the hub's own campaign.* and
// automation.triggered) is refused. A same column is one no node changes
// after the insert: not in its noun's edge update list (the hub may attach
// a customer to an order the edge then completes before it pulled that)
// and not its unique key (the hub renames an offline duplicate sku) —
// TestEventSubjectsCompareOnlyColumnsThatNeverChange.
type eventSubject struct {
	table      string
	atLocation bool
	same       []string
	// also, when set, checks more of the data against what the hub holds.
	also func(ctx context.Context, ad *admitter, id string, data map[string]any) error
}

// eventSubject admits an edge's event of typ only when its data names (id)
// a row the hub admitted, of the event's kind, in the edge's org (and
// location, for location data), whose never-changing columns the data
// gives as they are: a forged edge cannot invent an event about a sale
// that does not exist, or one the hub refused (its row was quarantined),
// nor move an automation's or a webhook consumer's hand with another
// customer or amount than the row's. The rest of the data (statuses,
// totals that later changes move) is the edge's account of the moment.
func (ad *admitter) eventSubject(ctx context.Context, typ string, data map[string]any) error {
	sub, ok := eventSubjectOf(typ)
	if !ok {
		return refuse(RefusedEntity, "%s events are not made at a store", typ)
	}
	id, _ := data["id"].(string)
	q := `SELECT 1`
	for _, col := range sub.same {
		q += ", " + col
	}
	q += " FROM " + sub.table + " WHERE id = ? AND org_id = ?"
	args := []any{id, ad.from.OrgID}
	if sub.atLocation {
		q += " AND location_id = ?"
		args = append(args, ad.from.LocationID)
	}
	vals := make([]any, 1+len(sub.same))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	err := ad.tx.QueryRowContext(ctx, q, args...).Scan(ptrs...)
	if errors.Is(err, sql.ErrNoRows) {
		return refuse(RefusedReference, "%s event about %s %q, which the hub does not hold here", typ, strings.TrimSuffix(sub.table, "s"), id)
	}
	if err != nil {
		return err
	}
	for i, col := range sub.same {
		if !sameValue(data[col], vals[i+1]) {
			return refuse(RefusedValue, "%s event gives %s %v, the hub holds %v", typ, col, data[col], vals[i+1])
		}
	}
	if sub.also != nil {
		return sub.also(ctx, ad, id, data)
	}
	return nil
}

// giftCardEvent checks the rest of a gift card event an edge made: it
// carries the card's code masked, as every event does (webhooks and
// automations must never get a full code), and a redeemed event is about
// a card some payment was redeemed from.
func giftCardEvent(redeemed bool) func(context.Context, *admitter, string, map[string]any) error {
	return func(ctx context.Context, ad *admitter, id string, data map[string]any) error {
		var code string
		var redeems int
		if err := ad.tx.QueryRowContext(ctx, `SELECT code, (SELECT count(*) FROM gift_card_transactions WHERE gift_card_id = ?1 AND type = 'redeem')
			FROM gift_cards WHERE id = ?1 AND org_id = ?2`, id, ad.from.OrgID).Scan(&code, &redeems); err != nil {
			return err // eventSubject found the card
		}
		if data["code"] != kassa.MaskedGiftCardCode(code) {
			return refuse(RefusedValue, "a gift card event carries the card's code masked")
		}
		if redeemed && redeems == 0 {
			return refuse(RefusedReference, "gift_card.redeemed about card %s, which no payment was redeemed from here", id)
		}
		return nil
	}
}

// sameValue compares a value of decoded JSON with a column's: numbers by
// value, null with NULL.
func sameValue(j, col any) bool {
	switch c := col.(type) {
	case nil:
		return j == nil
	case int64:
		n, ok := j.(float64)
		return ok && n == float64(c)
	case []byte:
		s, ok := j.(string)
		return ok && s == string(c)
	case string:
		s, ok := j.(string)
		return ok && s == c
	}
	return false
}

// checkReceipt: a store's receipt carries a number of one of its own
// node's sequences (the code starts with the node's number prefix), seq
// at least 1 and the number spelled from them; kind sale without a
// refund, refund with one of the order's refunds; one receipt per sale
// and per refund, and a number the org has not seen. The edge owns its
// numbering: no other node can take one of its numbers.
func checkReceipt(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if err := within(f, "seq", 1, maxAmount, true); err != nil {
		return err
	}
	str := func(k string) string { v, _ := f[k].(string); return v }
	seq, _ := intField(f, "seq")
	number, kind, refund, reg := str("number"), str("kind"), str("refund_id"), str("register_id")
	code, _, _ := strings.Cut(number, "-")
	if !strings.HasPrefix(number, numberPrefixOf(c.Origin)+"-") || code == "" ||
		!strings.HasSuffix(number, "-"+fmt.Sprintf("%06d", seq)) || len(number) > 100 {
		return refuse(RefusedValue, "receipt number %q is not one of node %s's sequences at seq %d", number, c.Origin, seq)
	}
	if reg != "" && !kassa.ValidRegisterID(reg) {
		return refuse(RefusedValue, "register_id %q is not a till id", reg)
	}
	if (kind == kassa.ReceiptSale) != (refund == "") || (kind != kassa.ReceiptSale && kind != kassa.ReceiptRefund) {
		return refuse(RefusedValue, "a sale's receipt has no refund_id, a refund's has one (kind %q)", kind)
	}
	var n int
	if err := ad.tx.QueryRowContext(ctx, `SELECT count(*) FROM receipts WHERE org_id = ?1 AND (number = ?2
		OR (order_id = ?3 AND coalesce(refund_id, '') = ?4))`, c.OrgID, number, str("order_id"), refund).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return refuse(RefusedValue, "receipt %s, or a receipt of that sale or refund, is already at the hub", number)
	}
	if refund != "" {
		if err := ad.tx.QueryRowContext(ctx, `SELECT count(*) FROM refunds WHERE id = ? AND order_id = ? AND org_id = ?`,
			refund, str("order_id"), c.OrgID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return refuse(RefusedReference, "refund %s is not a refund of order %s", refund, str("order_id"))
		}
	}
	return nil
}
