package engine

import (
	"context"
	"maps"
	"slices"
	"sort"

	"kassa.dev/sync/change"
)

// The registry of replicated nouns (docs/store.md, "The registry"). Each
// replicated noun registers itself once, in its own file beside its SQL
// (order.go, giftcard.go, drawer.go…): its table and scope, how its rows
// merge, what is derived and how it is recomputed, its unique keys, what
// the digests compare, what an edge may write of it and the admission
// check, the events about it, and the hooks the engine runs for it. The
// engine (tx.go, apply.go, trust.go, sync.go, format.go) reads nothing
// else: a new noun touches no engine file.

// noun is one replicated noun: a table whose row writes are captured as
// change records, merged at every node and (for some) admitted from edges.
type Noun struct {
	Name  string // the change record's entity, e.g. "gift_card"
	Table string
	// orgCol is the column holding the row's org: "org_id" (the
	// default), or "id" for orgs.
	OrgCol string
	// merge is how remote changes merge into a row (mergeLWW, the
	// default, or mergeAppend).
	Merge mergeMode
	// lattice: status columns that move only forward, whatever the
	// stamps say (column → rank of its values).
	Lattice map[string]func(string) int
	// latticeLoss: a lattice value whose loss is recorded as a conflict.
	LatticeLoss *LatticeLoss
	// derived columns are recomputed after every apply, never taken
	// from a change (track notes the rows to recompute).
	Derived []string
	// tombstone is the column whose non-null value deletes the row; erase
	// the columns it resets, and their values.
	Tombstone string
	Erase     map[string]any
	// unique is a column unique among an org's rows that two nodes can
	// fill alike while apart, and how a duplicate is settled.
	Unique *UniqueKey
	// digest is the condition that puts a row in an edge's scope (?1 org,
	// ?2 location) for Digests (orgRows, locationRows); empty: the table
	// is not compared.
	Digest string
	// edge is what an edge may write of the noun (trust.go); nil: it is
	// written at the hub only.
	Edge *EdgeRule
	// events are the events an edge makes about this noun's rows, by
	// type (eventSubject).
	Events map[string]EventSubject
	// formats are the change-record formats that changed the noun's
	// replicated columns, each with the migration that did (the format
	// before its first is firstFormat: it was there since).
	Formats []FormatStep
	// track notes, for a change applied from another node, the rows whose
	// derived columns it affects (applier.touch); recompute refreshes the
	// noun's rows a batch touched (key → org) once all its changes
	// applied, in the registry's order.
	Track     func(a *Applier, c *change.Change, fields map[string]any)
	Recompute func(ctx context.Context, a *Applier, rows map[string]string) error
	// ownBack runs in the apply unit for a change this node made that
	// came back to it (a restored edge's own changes).
	OwnBack func(ctx context.Context, tx *Tx, c *change.Change) error
	// merged runs after an apply unit committed, with the noun's rows it
	// touched (the kitchen tickets of the orders sync changed).
	Merged func(db *DB, rows map[string]string)
	// written runs in the unit after each local write of a row (the
	// campaigns' versions).
	Written func(ctx context.Context, tx *Tx, orgID, id string) error
	// redact masks in a copy of a record's fields (or of an event's data
	// about the noun) what a conflict's reader may not see (a gift card's
	// code); it reports whether it changed anything.
	Redact func(fields map[string]any) bool
	// newState makes what the noun keeps in memory beside its rows, once
	// per store at Open (stateOf); a state that is a UnitWatcher is kept
	// in step with the units that write the noun's rows.
	NewState func(db *DB) any
}

// entity is a registered noun, as the store's writes name it.
type Entity = *Noun

// lww reports whether rows of n merge field by field: their writes also
// stamp each field in field_hlc. Append-only rows are never updated.
func (n *Noun) LWW() bool { return n.Merge == mergeLWW }

// latticeLoss is a value of lattice column col that, when a merge moves
// the column past it or it meets a higher value, is recorded as a
// conflict of kind: an order's cancel that met a completion elsewhere.
type LatticeLoss struct{ Col, Value, Kind string }

type mergeMode int

const (
	mergeLWW    mergeMode = iota // field by field, the later stamp wins
	MergeAppend                  // inserted once; a replay is a no-op
)

// The digest scopes most nouns have.
const (
	OrgRows      = "org_id = ?1"
	LocationRows = "org_id = ?1 AND location_id = ?2"
)

// formatStep: from change-record format format on, a noun's replicated
// columns are those of migration migration.
type FormatStep struct{ Format, Migration int }

// firstFormat is the first change-record format (v0.5.0, v0.6.0): every
// noun without an earlier step has had its columns since.
var firstFormat = FormatStep{1, 12}

// nouns are the registered nouns by entity name; retired the entities an
// older format replicated (by name: the step that retired them).
var (
	Nouns   = map[string]*Noun{}
	retired = map[string]FormatStep{}
)

// register makes n the noun h names (h is its file's ent* handle, so that
// the noun's writes can name it before the registrations ran) and adds it
// to the registry. Called from init functions only.
func Register(h *Noun, n Noun) {
	if _, dup := Nouns[n.Name]; dup {
		panic("sqlite: noun " + n.Name + " registered twice")
	}
	if n.OrgCol == "" {
		n.OrgCol = "org_id"
	}
	for typ, sub := range n.Events {
		sub.Table, sub.of = n.Table, h
		n.Events[typ] = sub
	}
	*h = n
	Nouns[n.Name] = h
}

// retire registers an entity an older format replicated and every node
// derives since: its records, from an older edge or in the hub's log from
// before, are accepted and dropped.
func Retire(name string, step FormatStep) { retired[name] = step }

// nounOf returns the registered noun of a change record's entity.
func NounOf(entity string) (*Noun, bool) {
	n, ok := Nouns[entity]
	return n, ok
}

// nounOfTable returns the registered noun whose rows table holds.
func nounOfTable(table string) (*Noun, bool) {
	for _, n := range Nouns {
		if n.Table == table {
			return n, true
		}
	}
	return nil, false
}

// registered returns the registered nouns in name order.
func Registered() []*Noun {
	out := slices.Collect(maps.Values(Nouns))
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// formatMigrations maps each change-record format (change.Format) to the
// last migration whose replicated schema it carries, as the registry says:
// the latest migration any noun (or retirement) names for that format.
func FormatMigrations() map[int]int {
	out := map[int]int{firstFormat.Format: firstFormat.Migration}
	note := func(s FormatStep) { out[s.Format] = max(out[s.Format], s.Migration) }
	for _, n := range Nouns {
		for _, s := range n.Formats {
			note(s)
		}
	}
	for _, s := range retired {
		note(s)
	}
	return out
}

// eventSubjectOf returns the subject an edge's event of typ must be about.
func eventSubjectOf(typ string) (EventSubject, bool) {
	for _, n := range Nouns {
		if sub, ok := n.Events[typ]; ok {
			return sub, true
		}
	}
	return EventSubject{}, false
}

// digestScopes are the tables Digests compares, each with its scope.
func digestScopes() map[string]string {
	out := map[string]string{}
	for _, n := range Nouns {
		if n.Digest != "" {
			out[n.Table] = n.Digest
		}
	}
	return out
}
