package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

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
	// Enrolment says whether the push's unit checks that NodeID is
	// enrolled at OrgID's LocationID and not revoked (the hub's link:
	// it asks in the unit, no round trip of its own).
	Enrolment Enrolment
}

// Enrolment is EdgeScope's enrolment check.
type Enrolment int8

const (
	EnrolmentAssumed Enrolment = iota // the caller checked it
	EnrolmentChecked                  // Ingest refuses an unknown or revoked edge (ErrUnknownEdge)
)

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

func Refuse(code, format string, args ...any) error {
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
func (db *DB) SetUnderHub() { db.UnderHub.Store(true) }

// locMode says how a row is tied to a location.
type locMode int

const (
	orgWide        locMode = iota
	OwnLocation            // the row's location_id is the edge's
	ParentLocation         // the row's parent (edgeRule.parent: an order) is at the edge's location
	EitherEnd              // the edge's location is one of the row's ends (edgeRule.ends: a transfer's)
)

// ref is a column that names another row: a single id, a JSON list of ids
// (list), or a JSON list of objects holding the id under key.
type Ref struct {
	Col, Table string
	List       bool
	Key        string
}

// edgeRule is what an edge may write of one entity.
type EdgeRule struct {
	Loc locMode
	// parent is the column naming the row a parentLocation row belongs
	// to, and its table; ends are an eitherEnd row's two location
	// columns, the row's source first.
	Parent Ref
	Ends   [2]string
	Update []string // columns an update may change; nil: no updates
	// once are the columns written only when the row is made (an insert
	// may carry any column of the table; an update none of these). Every
	// column of the table is in update, once or the replica's derived
	// columns (TestEveryColumnOfAnEdgeWritableTableHasAnAdmissionRule).
	Once   []string
	Scopes []kassa.Scope // the actor needs one of them
	// scopesOf, when set, picks the scopes by the record itself.
	ScopesOf func(c *change.Change, f map[string]any) []kassa.Scope
	System   []string // update columns the node itself may write without an actor
	// anyUser: no scope is needed; an actor, when the record names one,
	// must be an active user of the org, and node-made records name none.
	AnyUser bool
	Refs    []Ref
	Check   func(ctx context.Context, ad *Admitter, c *change.Change, f map[string]any) error
}

var (
	CatalogWrite   = []kassa.Scope{kassa.ScopeCatalogWrite}
	SaleWrite      = []kassa.Scope{kassa.ScopeOrdersWrite, kassa.ScopePaymentsWrite}
	PaymentsWrite  = []kassa.Scope{kassa.ScopePaymentsWrite}
	LoyaltyWrite   = []kassa.Scope{kassa.ScopeLoyaltyWrite, kassa.ScopeOrdersWrite}
	InventoryWrite = []kassa.Scope{kassa.ScopeInventoryWrite}
)

// admitter checks one batch's changes against the nouns' edge rules.
type Admitter struct {
	Tx      *Tx
	From    EdgeScope
	columns map[string][]string  // table → its columns
	ActorOf *kassa.Actor         // the change being admitted: its actor as the hub knows it
	Users   map[string]BatchUser // actors read in this batch (org checked by the change's org, which is the edge's)
	// state is what a noun's hooks keep for the batch: the applier's
	// (batchState).
	State map[*Noun]any
	// absent says the row of the change admitted last is not here yet
	// (existing found none): its merge inserts without reading it again.
	absent bool
	// refOrgs are the orgs of the rows references named in this batch
	// (table NUL id → org): a row's org never changes and rows are never
	// deleted, so a catch-up's thousand lines of one product ask once.
	refOrgs map[string]string
	// rowsAt are the rows the batch's changes name, as they stood when the
	// batch began (table NUL id → row; nil: not here), read in one query a
	// noun (prefetch); asked marks the rows existing answered for since:
	// a row the batch wrote is read again.
	rowsAt map[string]*rowAt
	asked  map[string]bool
	// actors are the rows of the batch's actors in the ActorSources
	// (table NUL id → org and the source's columns), as the batch began.
	actors map[string]*rowAt
	// made are the rows this batch inserted (table NUL id → its org,
	// location and the fields its insert wrote), noted once their change
	// applied (Made): a sale's line names its order, made by the change
	// before it, and its reference, parent and tax checks read it here
	// (MadeRow), not in round trips of their own. A row's org and
	// location never change (edges may not write them); its fields are
	// forgotten once the batch changes it again (changedMade).
	made    map[string]rowAt
	pending struct {
		key string
		row rowAt
	}
}

// rowAt is a row's org and location columns (existing); for a row the
// batch made, also the fields its insert wrote (Made, MadeRow).
type rowAt struct {
	org, a, b string
	fields    map[string]any
}

// batchUser is an actor as the hub's users table has it, or an OAuth
// client of the org (client_credentials: no user) with its app's scopes.
type BatchUser struct {
	Role          string
	Active, Found bool
	Client        bool
	Scopes        []kassa.Scope
}

// admit refuses a change the edge may not make; fields are the change's
// values as the columns store them. A nil error admits it.
func (ad *Admitter) admit(ctx context.Context, c *change.Change, r *Noun, fields map[string]any) error {
	ad.absent = false
	if r.Edge == nil {
		return Refuse(RefusedEntity, "%s is written at the hub only", c.Entity)
	}
	rule := *r.Edge
	if c.OrgID != ad.From.OrgID {
		return Refuse(RefusedScope, "change of org %s from an edge of org %s", c.OrgID, ad.From.OrgID)
	}
	if id, ok := fields["id"]; ok && id != c.EntityID {
		return Refuse(RefusedField, "id %v differs from the change's row %s", id, c.EntityID)
	}
	if org, ok := fields[r.OrgCol]; ok && org != c.OrgID {
		return Refuse(RefusedScope, "%s %v differs from the change's org", r.OrgCol, org)
	}
	existing, err := ad.existing(ctx, c, r)
	if err != nil {
		return err
	}
	ad.absent = existing == nil
	ad.pending.key = ""
	ad.changedMade(r.Table + "\x00" + c.EntityID)
	if ad.absent {
		loc, _ := fields["location_id"].(string)
		ad.pending.key, ad.pending.row = r.Table+"\x00"+c.EntityID, rowAt{org: c.OrgID, a: loc, fields: fields}
	}
	if err := ad.writable(ctx, c, r, fields, existing); err != nil {
		return err
	}
	if err := ad.location(ctx, c, r, fields, existing); err != nil {
		return err
	}
	if err := ad.actor(ctx, c, rule, fields); err != nil {
		return err
	}
	for _, rf := range rule.Refs {
		if err := ad.reference(ctx, c, rf, fields[rf.Col]); err != nil {
			return err
		}
	}
	if rule.Check != nil {
		return rule.Check(ctx, ad, c, fields)
	}
	return nil
}

// writable refuses an operation the noun's edge rule does not allow, or a
// field it may not carry: an insert of a new row any column of the table
// but the stamps; an update (or an insert of a row this node has, which
// merges as one) only the rule's update columns.
func (ad *Admitter) writable(ctx context.Context, c *change.Change, r *Noun, fields, existing map[string]any) error {
	switch c.Op {
	case change.OpInsert:
		if existing == nil {
			cols, err := ad.tableColumns(ctx, r.Table)
			if err != nil {
				return err
			}
			for k := range fields {
				if !slices.Contains(cols, k) || k == "hlc" || k == "origin" || k == "field_hlc" {
					return Refuse(RefusedField, "%s has no writable field %q", c.Entity, k)
				}
			}
			return nil
		}
		fallthrough // an insert of a row this node has merges as an update
	case change.OpUpdate:
		if r.Edge.Update == nil {
			return Refuse(RefusedEntity, "%s rows are never changed once written", c.Entity)
		}
		for k := range fields {
			if k != "updated_at" && k != "id" && k != r.OrgCol && !slices.Contains(r.Edge.Update, k) {
				return Refuse(RefusedField, "an edge may not change %s.%s", c.Entity, k)
			}
		}
		return nil
	}
	return Refuse(RefusedEntity, "%s of %s is not an operation edges make", c.Op, c.Entity)
}

// existing returns the row's org and location columns as this node has
// them, or nil when it has no such row. A row of another org is refused;
// an update of a row this node has not got is out of order, or refused
// when the row was quarantined.
func (ad *Admitter) existing(ctx context.Context, c *change.Change, r *Noun) (map[string]any, error) {
	var org, a, b string
	err := sql.ErrNoRows
	key := r.Table + "\x00" + c.EntityID
	if row, ok := ad.rowsAt[key]; ok && !ad.asked[key] {
		if row != nil {
			org, a, b, err = row.org, row.a, row.b, nil
		}
	} else {
		err = ad.Tx.QueryRowContext(ctx, "SELECT "+existingCols(r)+" FROM "+r.Table+" WHERE id = ?", c.EntityID).Scan(&org, &a, &b)
	}
	if ad.asked != nil {
		ad.asked[key] = true
	}
	if errors.Is(err, sql.ErrNoRows) {
		if c.Op != change.OpInsert {
			if ad.quarantined(ctx, c.EntityID) {
				return nil, Refuse(RefusedReference, "%s %s was quarantined", c.Entity, c.EntityID)
			}
			return nil, fmt.Errorf("%w: %s %s", ErrOutOfOrder, c.Entity, c.EntityID)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if org != c.OrgID {
		return nil, Refuse(RefusedScope, "%s %s belongs to another org", c.Entity, c.EntityID)
	}
	if r.Edge.Loc == EitherEnd {
		return map[string]any{r.Edge.Ends[0]: a, r.Edge.Ends[1]: b}, nil
	}
	return map[string]any{"location_id": a}, nil
}

// existingCols are the row's org and two location columns, as existing
// reads them.
func existingCols(r *Noun) string {
	cols := "org_id"
	if r.OrgCol == "id" {
		cols = "id"
	}
	switch r.Edge.Loc {
	case OwnLocation:
		return cols + ", location_id, ''"
	case EitherEnd:
		return cols + ", " + r.Edge.Ends[0] + ", " + r.Edge.Ends[1]
	}
	return cols + ", '', ''"
}

// prefetch is the admitter's part of the batch's first read (fetchRows):
// the rows the batch's changes name as they stand before it, for
// existing, the orgs of the rows their single-id references name, for
// refOrg, and their actors in each of the ActorSources, for actor.
func (ad *Admitter) prefetch(changes []change.Change) []fetchPart {
	ad.rowsAt, ad.asked, ad.actors = map[string]*rowAt{}, map[string]bool{}, map[string]*rowAt{}
	var parts []fetchPart
	at := map[string]int{} // table and kind → its part
	add := func(table, cols string, kind partKind, id string) {
		key := table + "\x00" + strconv.Itoa(int(kind))
		i, ok := at[key]
		if !ok {
			i, at[key] = len(parts), len(parts)
			parts = append(parts, fetchPart{table: table, cols: cols, kind: kind})
		}
		parts[i].ids = append(parts[i].ids, id)
	}
	named := map[string]bool{}
	for i := range changes {
		c := &changes[i]
		r, ok := NounOf(c.Entity)
		if !ok || r.Edge == nil {
			continue
		}
		if key := r.Table + "\x00" + c.EntityID; !named[key] {
			named[key], ad.rowsAt[key] = true, nil // not here, unless fetchRows finds it
			add(r.Table, existingCols(r), partRow, c.EntityID)
		}
		for _, rf := range r.Edge.Refs {
			id, _ := c.Fields[rf.Col].(string)
			if key := rf.Table + "\x00" + id; !rf.List && rf.Key == "" && kassa.ValidID(id) && !named["ref\x00"+key] {
				named["ref\x00"+key] = true
				add(rf.Table, refCols, partRef, id)
			}
		}
		if c.Actor != "" && !named["actor\x00"+c.Actor] {
			named["actor\x00"+c.Actor] = true
			for _, src := range ActorSources {
				add(src.Table, "org_id, "+src.Cols, partActor, c.Actor)
			}
		}
	}
	return parts
}

// refCols are what prefetch reads of a referenced row: its org.
const refCols = "org_id, '', ''"

// actor replays authorization: the change's actor must be an active user
// of the org whose role grants one of the rule's scopes. A change without
// an actor is the node's own work, allowed only for the rule's system columns.
func (ad *Admitter) actor(ctx context.Context, c *change.Change, rule EdgeRule, fields map[string]any) error {
	ad.ActorOf = nil
	if c.Actor == "" {
		if rule.AnyUser {
			return nil
		}
		if c.Op == change.OpUpdate && len(rule.System) > 0 {
			for k := range fields {
				if k != "updated_at" && !slices.Contains(rule.System, k) {
					return Refuse(RefusedActor, "%s.%s changed without an actor", c.Entity, k)
				}
			}
			return nil
		}
		return Refuse(RefusedActor, "%s %s without an actor", c.Op, c.Entity)
	}
	// Each actor is read once per batch (findActor: from the first read);
	// a user the batch writes is forgotten (the user noun's check) and
	// read again.
	u, ok := ad.Users[c.Actor]
	if !ok {
		var err error
		if u, err = ad.findActor(ctx, c); err != nil {
			return err
		}
		if ad.Users == nil {
			ad.Users = map[string]BatchUser{}
		}
		ad.Users[c.Actor] = u
	}
	if !u.Found {
		return Refuse(RefusedActor, "actor %s is not a user of the org", c.Actor)
	}
	if !u.Active {
		return Refuse(RefusedActor, "actor %s is deactivated", c.Actor)
	}
	role := u.Role
	ad.ActorOf = &kassa.Actor{OrgID: c.OrgID, UserID: c.Actor, Role: kassa.Role(role), Scopes: kassa.RoleScopes(kassa.Role(role))}
	if u.Client {
		ad.ActorOf = &kassa.Actor{OrgID: c.OrgID, ClientID: c.Actor, Scopes: u.Scopes}
		role = "client " + c.Actor
	}
	if rule.AnyUser {
		return nil
	}
	scopes := rule.Scopes
	if rule.ScopesOf != nil {
		scopes = rule.ScopesOf(c, fields)
	}
	for _, s := range ad.ActorOf.Scopes {
		if slices.Contains(scopes, s) {
			return nil
		}
	}
	return Refuse(RefusedActor, "a %s may not write %s", role, c.Entity)
}

// ActorSource is a table of the org's actors by id: Cols are two of its
// columns as text, Decode makes the actor of them.
type ActorSource struct {
	Table, Cols string
	Decode      func(a, b string) (BatchUser, error)
}

// ActorSources are where a change's actor is, as the hub knows it, tried
// in order until one has it: the org's users (user.go), then its OAuth
// clients (oauth.go). Each is registered from an init function.
var ActorSources []ActorSource

// findActor is c's actor: as the batch's first read found it, or read
// now when that read cannot answer (the batch wrote the actor's row, or
// none had it: a user the batch makes). Not found is a BatchUser without
// Found.
func (ad *Admitter) findActor(ctx context.Context, c *change.Change) (BatchUser, error) {
	for _, src := range ActorSources {
		key := src.Table + "\x00" + c.Actor
		if row := ad.actors[key]; row != nil && row.org == c.OrgID && !ad.asked[key] {
			return src.Decode(row.a, row.b)
		}
	}
	for _, src := range ActorSources {
		var a, b string
		err := ad.Tx.QueryRowContext(ctx, "SELECT "+src.Cols+" FROM "+src.Table+" WHERE id = ? AND org_id = ?", c.Actor, c.OrgID).Scan(&a, &b)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return BatchUser{}, err
		}
		return src.Decode(a, b)
	}
	return BatchUser{}, nil
}

// location checks that a location-scoped row is the edge's location's.
func (ad *Admitter) location(ctx context.Context, c *change.Change, r *Noun, fields, existing map[string]any) error {
	mine := ad.From.LocationID
	switch r.Edge.Loc {
	case OwnLocation:
		if err := ad.recordAtEdge(c, fields); err != nil {
			return err
		}
		if existing != nil && existing["location_id"] != mine {
			return Refuse(RefusedScope, "%s %s is another location's", c.Entity, c.EntityID)
		}
		if c.Op == change.OpInsert && existing == nil && fields["location_id"] != mine {
			return Refuse(RefusedField, "%s needs its location_id", c.Entity)
		}
	case ParentLocation:
		if err := ad.recordAtEdge(c, fields); err != nil {
			return err
		}
		return ad.parentAtEdge(ctx, c, r, fields, existing)
	case EitherEnd:
		ends := r.Edge.Ends
		from, to := fields[ends[0]], fields[ends[1]]
		if existing != nil {
			from, to = existing[ends[0]], existing[ends[1]]
		}
		if existing == nil && from != mine {
			return Refuse(RefusedScope, "a %s is created at its source location, not %s", c.Entity, mine)
		}
		if from != mine && to != mine {
			return Refuse(RefusedScope, "%s %s is between other locations", c.Entity, c.EntityID)
		}
	}
	return nil
}

// recordAtEdge refuses a change whose record, or location_id, names
// another location than the edge's.
func (ad *Admitter) recordAtEdge(c *change.Change, fields map[string]any) error {
	mine := ad.From.LocationID
	if c.LocationID != mine {
		return Refuse(RefusedScope, "%s of location %q from the edge of location %s", c.Entity, c.LocationID, mine)
	}
	if v, ok := fields["location_id"]; ok && v != mine {
		return Refuse(RefusedScope, "location_id %v is not the edge's location", v)
	}
	return nil
}

// parentAtEdge refuses a parentLocation row whose parent (or, for an
// update that names none, the row itself) is another location's.
func (ad *Admitter) parentAtEdge(ctx context.Context, c *change.Change, r *Noun, fields, existing map[string]any) error {
	mine, col := ad.From.LocationID, r.Edge.Parent
	parent, _ := fields[col.Col].(string)
	if c.Op == change.OpInsert && parent == "" {
		if existing != nil {
			return nil // an insert of a row this node has merges as an update
		}
		return Refuse(RefusedField, "%s needs its %s", c.Entity, col.Col)
	}
	var loc string
	if parent == "" { // an update: the row's own location (existing found it)
		if err := ad.Tx.QueryRowContext(ctx, `SELECT location_id FROM `+r.Table+` WHERE id = ?`, c.EntityID).Scan(&loc); err != nil {
			return err
		}
		if loc != mine {
			return Refuse(RefusedScope, "%s %s is another location's", c.Entity, c.EntityID)
		}
		return nil
	}
	err := sql.ErrNoRows
	if row, ok := ad.made[col.Table+"\x00"+parent]; ok && row.org == c.OrgID {
		loc, err = row.a, nil
	} else if !ok {
		err = ad.Tx.QueryRowContext(ctx, `SELECT location_id FROM `+col.Table+` WHERE id = ? AND org_id = ?`, parent, c.OrgID).Scan(&loc)
	}
	if err == nil && loc != mine {
		return Refuse(RefusedScope, "%s %s is another location's", strings.TrimSuffix(col.Table, "s"), parent)
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	} // a missing parent is the reference check's to judge
	return nil
}

// reference checks the rows a column names: each must belong to the org
// (a missing one is out of order, unless it was quarantined).
func (ad *Admitter) reference(ctx context.Context, c *change.Change, rf Ref, v any) error {
	var ids []string
	switch {
	case v == nil:
		return nil
	case rf.List || rf.Key != "":
		s, ok := v.(string)
		if !ok {
			return Refuse(RefusedValue, "%s must be a list", rf.Col)
		}
		if rf.Key == "" {
			if err := json.Unmarshal([]byte(s), &ids); err != nil {
				return Refuse(RefusedValue, "%s must be a list of ids", rf.Col)
			}
			break
		}
		var objs []map[string]any
		if err := json.Unmarshal([]byte(s), &objs); err != nil {
			return Refuse(RefusedValue, "%s must be a list of objects", rf.Col)
		}
		for _, o := range objs {
			id, ok := o[rf.Key].(string)
			if !ok {
				return Refuse(RefusedValue, "%s: every entry needs %s", rf.Col, rf.Key)
			}
			ids = append(ids, id)
		}
	default:
		s, ok := v.(string)
		if !ok {
			return Refuse(RefusedValue, "%s must be an id", rf.Col)
		}
		ids = []string{s}
	}
	for _, id := range ids {
		if !kassa.ValidID(id) {
			return Refuse(RefusedValue, "%s: %q is not an id", rf.Col, id)
		}
		org, err := ad.refOrg(ctx, rf.Table, id)
		if errors.Is(err, sql.ErrNoRows) {
			if ad.quarantined(ctx, id) {
				return Refuse(RefusedReference, "%s names %s, which was quarantined", rf.Col, id)
			}
			if n, ok := nounOfTable(rf.Table); ok && n.Edge == nil {
				// Written at the hub only: it never comes from the edge.
				return Refuse(RefusedReference, "%s names an unknown %s %s", rf.Col, strings.TrimSuffix(rf.Table, "s"), id)
			}
			return fmt.Errorf("%w: %s %s named by %s", ErrOutOfOrder, rf.Table, id, rf.Col)
		}
		if err != nil {
			return err
		}
		if org != c.OrgID {
			return Refuse(RefusedReference, "%s names %s of another org", rf.Col, id)
		}
	}
	return nil
}

// Made notes the row of the change admitted last as this batch's own,
// once its change applied (the row is then written).
func (ad *Admitter) Made() {
	if ad.pending.key == "" {
		return
	}
	if ad.made == nil {
		ad.made = map[string]rowAt{}
	}
	ad.made[ad.pending.key], ad.pending.key = ad.pending.row, ""
}

// MadeRow returns the org and location of a row of table this batch
// inserted, and its columns cols as the insert wrote them, when the batch
// made it and its insert named every one of them: a later change's check
// reads them here, not in a round trip of its own (nor before the batch's
// inserts are written, Tx.InsertLater). A row's org and location never
// change, and cols must be columns no change of the batch can have
// changed since (columns edges never update).
func (ad *Admitter) MadeRow(table, id string, cols ...string) (org, location string, vals []any, ok bool) {
	row, ok := ad.made[table+"\x00"+id]
	if !ok {
		return "", "", nil, false
	}
	vals = make([]any, len(cols))
	for i, col := range cols {
		if vals[i], ok = row.fields[col]; !ok {
			return "", "", nil, false
		}
	}
	return row.org, row.a, vals, true
}

// changedMade forgets the fields of a row the batch made and now changes
// again: MadeRow then reads it (its org and location stay).
func (ad *Admitter) changedMade(key string) {
	if row, ok := ad.made[key]; ok && row.fields != nil {
		row.fields = nil
		ad.made[key] = row
	}
}

// refOrg is the org of the row id of table, read once per batch.
func (ad *Admitter) refOrg(ctx context.Context, table, id string) (string, error) {
	key := table + "\x00" + id
	if org, ok := ad.refOrgs[key]; ok {
		return org, nil
	}
	if row, ok := ad.made[key]; ok {
		return row.org, nil
	}
	var org string
	if err := ad.Tx.QueryRowContext(ctx, "SELECT org_id FROM "+table+" WHERE id = ?", id).Scan(&org); err != nil {
		return "", err
	}
	if ad.refOrgs == nil {
		ad.refOrgs = map[string]string{}
	}
	ad.refOrgs[key] = org
	return org, nil
}

func (ad *Admitter) quarantined(ctx context.Context, entityID string) bool {
	var n int
	ad.Tx.QueryRowContext(ctx, `SELECT count(*) FROM sync_quarantine WHERE entity_id = ?`, entityID).Scan(&n)
	return n > 0
}

// tableColumns returns a table's columns, read once per store (on
// PostgreSQL, information_schema's query was a quarter of the database's
// time in the ingest bench at two a push) and cached per batch.
func (ad *Admitter) tableColumns(ctx context.Context, table string) ([]string, error) {
	if cols, ok := ad.columns[table]; ok {
		return cols, nil
	}
	if cols, ok := ad.Tx.DB.tableColumns.Load(table); ok {
		return ad.keepColumns(table, cols.([]string)), nil
	}
	rows, err := ad.Tx.QueryContext(ctx, D(ad.Tx).ColumnsSQL(), table)
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
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(cols) > 0 {
		ad.Tx.DB.tableColumns.Store(table, cols)
	}
	return ad.keepColumns(table, cols), nil
}

// keepColumns caches a table's columns for the batch.
func (ad *Admitter) keepColumns(table string, cols []string) []string {
	if ad.columns == nil {
		ad.columns = map[string][]string{}
	}
	ad.columns[table] = cols
	return cols
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
type EventSubject struct {
	of         *Noun // set by register
	Table      string
	AtLocation bool
	Same       []string
	// also, when set, checks more of the data against what the hub holds.
	Also func(ctx context.Context, ad *Admitter, id string, data map[string]any) error
}

// eventSubject admits an edge's event of typ only when its data names (id)
// a row the hub admitted, of the event's kind, in the edge's org (and
// location, for location data), whose never-changing columns the data
// gives as they are: a forged edge cannot invent an event about a sale
// that does not exist, or one the hub refused (its row was quarantined),
// nor move an automation's or a webhook consumer's hand with another
// customer or amount than the row's. The rest of the data (statuses,
// totals that later changes move) is the edge's account of the moment.
func (ad *Admitter) eventSubject(ctx context.Context, typ string, data eventData) error {
	sub, ok := eventSubjectOf(typ)
	if !ok {
		return Refuse(RefusedEntity, "%s events are not made at a store", typ)
	}
	id, _ := data.value("id").(string)
	q := `SELECT 1`
	for _, col := range sub.Same {
		q += ", " + col
	}
	q += " FROM " + sub.Table + " WHERE id = ? AND org_id = ?"
	args := []any{id, ad.From.OrgID}
	if sub.AtLocation {
		q += " AND location_id = ?"
		args = append(args, ad.From.LocationID)
	}
	vals, err := ad.subjectRow(ctx, sub, id, q, args)
	if errors.Is(err, sql.ErrNoRows) {
		return Refuse(RefusedReference, "%s event about %s %q, which the hub does not hold here", typ, strings.TrimSuffix(sub.Table, "s"), id)
	}
	if err != nil {
		return err
	}
	for i, col := range sub.Same {
		if v := data.value(col); !sameValue(v, vals[i+1]) {
			return Refuse(RefusedValue, "%s event gives %s %v, the hub holds %v", typ, col, v, vals[i+1])
		}
	}
	if sub.Also != nil {
		return sub.Also(ctx, ad, id, data.all())
	}
	return nil
}

// subjectRow reads an event subject's row (q, args: its fixed columns
// after a 1), from the batch when the batch made it (an order and the
// event of its sale arrive in one push).
func (ad *Admitter) subjectRow(ctx context.Context, sub EventSubject, id, q string, args []any) ([]any, error) {
	if org, loc, same, ok := ad.MadeRow(sub.Table, id, sub.Same...); ok {
		if org != ad.From.OrgID || sub.AtLocation && loc != ad.From.LocationID {
			return nil, sql.ErrNoRows // as the query's WHERE finds it
		}
		return append([]any{int64(1)}, same...), nil
	}
	vals := make([]any, 1+len(sub.Same))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return vals, ad.Tx.QueryRowContext(ctx, q, args...).Scan(ptrs...)
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
	case float64: // a column as a batch's insert wrote it (MadeRow)
		n, ok := j.(float64)
		return ok && n == c
	case []byte:
		s, ok := j.(string)
		return ok && s == string(c)
	case string:
		s, ok := j.(string)
		return ok && s == c
	}
	return false
}
