package engine

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Row inserts written later, many to a statement. The hub's apply of an
// edge's push inserted each new row with a statement of its own: a
// catch-up's batch of 500 records was some 470 inserts, a round trip each
// on PostgreSQL. InsertLater keeps a unit's inserts instead, and the
// unit's next other statement (Tx.ExecContext, QueryContext,
// QueryRowContext) or its end writes them first, a statement per table
// and up to laterMaxRows rows: every read of the unit sees every row it
// wrote, as before.
//
// Within that write, a table's rows go after the rows of the tables it
// references (insertRanks: the nouns' admission references and parents),
// so a line follows its order whatever order the batch named them in. A
// write that fails fails the unit; the hub's apply then applies the
// batch record by record (applyEach), each record's inserts written at
// its own end, so a refusal still names its record.

// laterRows are a unit's inserts waiting to be written, by shape (one
// single-row statement text), in the order their shapes first came.
type laterRows struct {
	shapes map[string]*laterShape
	order  []*laterShape
	// err is the first write that failed: every later statement of the
	// unit, and its end, returns it (QueryRowContext cannot).
	err error
}

// laterShape is the rows of one insert statement text waiting.
type laterShape struct {
	query string // the single-row statement
	width int    // its parameters
	rank  int    // insertRanks of its table
	args  []any  // width values a row
}

// laterMaxRows and laterMaxArgs bound one statement: far below SQLite's
// and PostgreSQL's limits of parameters, in powers of two so that a
// shape has a few statement texts (the writer prepares each once).
const (
	laterMaxRows = 128
	laterMaxArgs = 8192
)

// InsertLater queues a row insert of query (an INSERT … VALUES (…) … of
// one row, its columns in the same order for every call with the same
// text) with args, written with the unit's next other statement.
func (tx *Tx) InsertLater(table, query string, args ...any) {
	l := &tx.later
	s := l.shapes[query]
	if s == nil {
		if l.shapes == nil {
			l.shapes = map[string]*laterShape{}
		}
		s = &laterShape{query: query, width: len(args), rank: insertRanks()[table]}
		l.shapes[query] = s
		l.order = append(l.order, s)
	}
	s.args = append(s.args, args...)
}

// flushLater writes the inserts waiting, a statement per shape and chunk.
func (tx *Tx) flushLater(ctx context.Context) error {
	l := &tx.later
	if l.err != nil || len(l.order) == 0 {
		return l.err
	}
	shapes := l.order
	l.shapes, l.order = nil, nil
	slices.SortStableFunc(shapes, func(a, b *laterShape) int { return a.rank - b.rank })
	for _, s := range shapes {
		if l.err = tx.writeLater(ctx, s); l.err != nil {
			return l.err
		}
	}
	return nil
}

// writeLater writes one shape's rows in chunks of a power of two rows.
func (tx *Tx) writeLater(ctx context.Context, s *laterShape) error {
	most := laterMaxRows
	for most > 1 && most*s.width > laterMaxArgs {
		most /= 2
	}
	for rows := s.args; len(rows) > 0; {
		n := most
		for n*s.width > len(rows) {
			n /= 2
		}
		if err := tx.execLater(ctx, tx.DB.laterQuery(s.query, n), rows[:n*s.width]...); err != nil {
			return err
		}
		rows = rows[n*s.width:]
	}
	return nil
}

// laterQuery is query (one row's VALUES (…)) for n rows, built once and
// kept with the writer's other row statements.
func (db *DB) laterQuery(query string, n int) string {
	if n == 1 {
		return query
	}
	key := "later|" + strconv.Itoa(n) + "|" + query
	if q, ok := db.rowQueries.load(key); ok {
		return q
	}
	at := strings.Index(query, " VALUES (") + len(" VALUES ")
	end := at + strings.IndexByte(query[at:], ')') + 1
	tuple := query[at:end]
	var b strings.Builder
	b.WriteString(query[:at])
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
	}
	b.WriteString(query[end:])
	q := b.String()
	db.rowQueries.store(key, q)
	return q
}

// insertRanks orders the tables of the nouns an edge writes for
// flushLater: a table ranks above every table its noun's admission rules
// reference (Refs) or name as the parent, so a row is written after the
// rows it names. Tables outside the registry rank 0.
var insertRanks = sync.OnceValue(func() map[string]int {
	g := rankGraph{deps: map[string][]string{}, ranks: map[string]int{}}
	for _, n := range Registered() {
		if n.Edge == nil {
			continue
		}
		for _, rf := range n.Edge.Refs {
			g.deps[n.Table] = append(g.deps[n.Table], rf.Table)
		}
		if n.Edge.Parent.Table != "" {
			g.deps[n.Table] = append(g.deps[n.Table], n.Edge.Parent.Table)
		}
	}
	for t := range g.deps {
		g.rank(t, 0)
	}
	return g.ranks
})

// rankGraph is the tables' references while insertRanks ranks them.
type rankGraph struct {
	deps  map[string][]string
	ranks map[string]int
}

// rank is 1 + the highest rank of what t references (0: nothing); a
// reference back to t itself, or a cycle, adds nothing.
func (g rankGraph) rank(t string, depth int) int {
	if r, ok := g.ranks[t]; ok {
		return r
	}
	if depth > len(g.deps) {
		return 0
	}
	r := 0
	for _, d := range g.deps[t] {
		if d != t {
			r = max(r, g.rank(d, depth+1)+1)
		}
	}
	g.ranks[t] = r
	return r
}
