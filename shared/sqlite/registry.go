package sqlite

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
type noun struct {
	name  string // the change record's entity, e.g. "gift_card"
	table string
	// orgCol is the column holding the row's org: "org_id" (the
	// default), or "id" for orgs.
	orgCol string
	// merge is how remote changes merge into a row (mergeLWW, the
	// default, or mergeAppend).
	merge mergeMode
	// lattice: status columns that move only forward, whatever the
	// stamps say (column → rank of its values).
	lattice map[string]func(string) int
	// latticeLoss: a lattice value whose loss is recorded as a conflict.
	latticeLoss *latticeLoss
	// derived columns are recomputed after every apply, never taken
	// from a change (track notes the rows to recompute).
	derived []string
	// tombstone is the column whose non-null value deletes the row; erase
	// the columns it resets, and their values.
	tombstone string
	erase     map[string]any
	// unique is a column unique among an org's rows that two nodes can
	// fill alike while apart, and how a duplicate is settled.
	unique *uniqueKey
	// digest is the condition that puts a row in an edge's scope (?1 org,
	// ?2 location) for Digests (orgRows, locationRows); empty: the table
	// is not compared.
	digest string
	// edge is what an edge may write of the noun (trust.go); nil: it is
	// written at the hub only.
	edge *edgeRule
	// events are the events an edge makes about this noun's rows, by
	// type (eventSubject).
	events map[string]eventSubject
	// formats are the change-record formats that changed the noun's
	// replicated columns, each with the migration that did (the format
	// before its first is firstFormat: it was there since).
	formats []formatStep
	// track notes, for a change applied from another node, the rows whose
	// derived columns it affects (applier.touch); recompute refreshes the
	// noun's rows a batch touched (key → org) once all its changes
	// applied, in the registry's order.
	track     func(a *applier, c *change.Change, fields map[string]any)
	recompute func(ctx context.Context, a *applier, rows map[string]string) error
	// ownBack runs in the apply unit for a change this node made that
	// came back to it (a restored edge's own changes).
	ownBack func(ctx context.Context, tx *Tx, c *change.Change) error
	// merged runs after an apply unit committed, with the noun's rows it
	// touched (the kitchen tickets of the orders sync changed).
	merged func(db *DB, rows map[string]string)
	// written runs in the unit after each local write of a row (the
	// campaigns' versions).
	written func(ctx context.Context, tx *Tx, orgID, id string) error
	// redact masks in a copy of a record's fields (or of an event's data
	// about the noun) what a conflict's reader may not see (a gift card's
	// code); it reports whether it changed anything.
	redact func(fields map[string]any) bool
	// newState makes what the noun keeps in memory beside its rows, once
	// per store at Open (stateOf); a state that is a unitWatcher is kept
	// in step with the units that write the noun's rows.
	newState func(db *DB) any
}

// entity is a registered noun, as the store's writes name it.
type entity = *noun

// lww reports whether rows of n merge field by field: their writes also
// stamp each field in field_hlc. Append-only rows are never updated.
func (n *noun) lww() bool { return n.merge == mergeLWW }

// latticeLoss is a value of lattice column col that, when a merge moves
// the column past it or it meets a higher value, is recorded as a
// conflict of kind: an order's cancel that met a completion elsewhere.
type latticeLoss struct{ col, value, kind string }

type mergeMode int

const (
	mergeLWW    mergeMode = iota // field by field, the later stamp wins
	mergeAppend                  // inserted once; a replay is a no-op
)

// The digest scopes most nouns have.
const (
	orgRows      = "org_id = ?1"
	locationRows = "org_id = ?1 AND location_id = ?2"
)

// formatStep: from change-record format format on, a noun's replicated
// columns are those of migration migration.
type formatStep struct{ format, migration int }

// firstFormat is the first change-record format (v0.5.0, v0.6.0): every
// noun without an earlier step has had its columns since.
var firstFormat = formatStep{1, 12}

// nouns are the registered nouns by entity name; retired the entities an
// older format replicated (by name: the step that retired them).
var (
	nouns   = map[string]*noun{}
	retired = map[string]formatStep{}
)

// register makes n the noun h names (h is its file's ent* handle, so that
// the noun's writes can name it before the registrations ran) and adds it
// to the registry. Called from init functions only.
func register(h *noun, n noun) {
	if _, dup := nouns[n.name]; dup {
		panic("sqlite: noun " + n.name + " registered twice")
	}
	if n.orgCol == "" {
		n.orgCol = "org_id"
	}
	for typ, sub := range n.events {
		sub.table, sub.of = n.table, h
		n.events[typ] = sub
	}
	*h = n
	nouns[n.name] = h
}

// retire registers an entity an older format replicated and every node
// derives since: its records, from an older edge or in the hub's log from
// before, are accepted and dropped.
func retire(name string, step formatStep) { retired[name] = step }

// nounOf returns the registered noun of a change record's entity.
func nounOf(entity string) (*noun, bool) {
	n, ok := nouns[entity]
	return n, ok
}

// nounOfTable returns the registered noun whose rows table holds.
func nounOfTable(table string) (*noun, bool) {
	for _, n := range nouns {
		if n.table == table {
			return n, true
		}
	}
	return nil, false
}

// registered returns the registered nouns in name order.
func registered() []*noun {
	out := slices.Collect(maps.Values(nouns))
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// formatMigrations maps each change-record format (change.Format) to the
// last migration whose replicated schema it carries, as the registry says:
// the latest migration any noun (or retirement) names for that format.
func formatMigrations() map[int]int {
	out := map[int]int{firstFormat.format: firstFormat.migration}
	note := func(s formatStep) { out[s.format] = max(out[s.format], s.migration) }
	for _, n := range nouns {
		for _, s := range n.formats {
			note(s)
		}
	}
	for _, s := range retired {
		note(s)
	}
	return out
}

// eventSubjectOf returns the subject an edge's event of typ must be about.
func eventSubjectOf(typ string) (eventSubject, bool) {
	for _, n := range nouns {
		if sub, ok := n.events[typ]; ok {
			return sub, true
		}
	}
	return eventSubject{}, false
}

// digestScopes are the tables Digests compares, each with its scope.
func digestScopes() map[string]string {
	out := map[string]string{}
	for _, n := range nouns {
		if n.digest != "" {
			out[n.table] = n.digest
		}
	}
	return out
}
