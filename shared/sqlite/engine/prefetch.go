package engine

import (
	"context"
	"strconv"
	"strings"
)

// The batch's first read: what an apply asks before its first change, in
// one statement for the whole batch (UNION ALL, chunks of 500 ids) — on
// PostgreSQL a round trip each was three a push: which changes this node
// applied before and which events the hub's log holds (Applier.preload),
// whether held events wait and the pushing edge is enrolled (markers), the
// rows the changes name, the orgs of the rows they reference, and their
// actors (Admitter.prefetch).

// partKind is what the rows of one part of the first read say.
type partKind int

const (
	partRow    partKind = iota // a row a change names, as it stands (Admitter.rowsAt)
	partRef                    // a referenced row's org (Admitter.refOrgs)
	partActor                  // an actor's row in one of the ActorSources (Admitter.actors)
	partDone                   // a change applied here before (Applier.done)
	partLogged                 // an event the hub's log holds (Applier.logged)
	partMarker                 // a condition of the store (Applier.markers): a row when it holds
)

// fetchPart is one part of the first read: cols (org and two more, as
// text) of the rows of table with ids, or for a marker its condition.
type fetchPart struct {
	table, cols string
	kind        partKind
	ids         []string
	cond        string // partMarker: an SQL condition with args
	args        []any
}

// presence is the columns of a part that asks only whether rows exist.
const presence = "'', '', ''"

// marker is the part that answers whether cond (with args) holds.
func marker(name, cond string, args ...any) fetchPart {
	return fetchPart{table: name, kind: partMarker, cond: cond, args: args}
}

// fetchRows reads parts, UNION ALL in statements of up to 500 ids (the
// markers in the first), and notes what they found.
func (a *Applier) fetchRows(ctx context.Context, parts []fetchPart) error {
	for first := true; first || len(parts) > 0; first = false {
		var q []string
		var args []any
		var segs []*fetchPart
		var rest []fetchPart
		for i := range parts {
			p := &parts[i]
			if p.kind == partMarker {
				if first {
					q, args, segs = append(q, "SELECT "+strconv.Itoa(len(segs))+", '', "+presence+" WHERE "+p.cond), append(args, p.args...), append(segs, p)
				}
				continue
			}
			if len(p.ids) == 0 {
				continue
			}
			if len(args) >= 500 {
				rest = append(rest, *p)
				continue
			}
			n := min(len(p.ids), 500-len(args))
			// Padded to a power of two (a repeated id finds its row
			// once): the statement then has a few texts whatever the
			// pushes a unit joins, each prepared once.
			ids := padded(p.ids[:n])
			if len(ids) > 500-len(args) {
				ids = ids[:n]
			}
			q = append(q, "SELECT "+strconv.Itoa(len(segs))+", id, "+p.cols+" FROM "+p.table+" WHERE id IN ("+Placeholders(len(ids))+")")
			args = append(args, ids...)
			segs = append(segs, p)
			if n < len(p.ids) {
				more := *p
				more.ids = p.ids[n:]
				rest = append(rest, more)
			}
		}
		if len(q) > 0 {
			if err := a.noteRows(ctx, strings.Join(q, " UNION ALL "), args, segs); err != nil {
				return err
			}
		}
		parts = rest
	}
	return nil
}

// noteRows runs the first read's statement q and notes each row by its
// part (segs).
func (a *Applier) noteRows(ctx context.Context, q string, args []any, segs []*fetchPart) error {
	rows, err := a.Tx.Tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var seg int
		var id string
		row := &rowAt{}
		if err := rows.Scan(&seg, &id, &row.org, &row.a, &row.b); err != nil {
			return err
		}
		a.note(segs[seg], id, row)
	}
	return rows.Err()
}

// note keeps what the first read found of part p: row id.
func (a *Applier) note(p *fetchPart, id string, row *rowAt) {
	key := p.table + "\x00" + id
	switch p.kind {
	case partDone:
		a.done[id] = true
	case partLogged:
		a.logged[id] = true
	case partMarker:
		a.markers[p.table] = true
	case partRow:
		a.Admitter.rowsAt[key] = row
	case partActor:
		a.Admitter.actors[key] = row
	case partRef:
		if a.Admitter.refOrgs == nil {
			a.Admitter.refOrgs = map[string]string{}
		}
		a.Admitter.refOrgs[key] = row.org
	}
}
