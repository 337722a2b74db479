package engine

// Joined units: units of one kind queued side by side run as one unit of
// work, under one savepoint, when their kind says they may (joinKind.fit):
// the kind's run does for all of them at once what each would do alone,
// with one statement where each would run its own. The hub's ingest joins
// the pushes of many edges so (ingest.go): a push of one sale ran two round
// trips and eight statements of its own on PostgreSQL; a unit of sixteen
// runs about as many as one. When the joined unit fails, whatever failed,
// it is rolled back to its savepoint and each of its units runs alone, as
// it would have without joining: a refusal, a conflict of keys, an edge
// revoked, all answer as before. docs/write-path.md, "Joined pushes".

import "context"

// maxJoin bounds how many units run joined: on PostgreSQL a batch holds
// no more (maxBatchLoops).
const maxJoin = 16

// maxJoinedPush bounds the records of a push that may run joined: a
// catch-up's pushes of hundreds run alone (their index would cost CPU for
// nothing: an edge's pushes in flight touch its stock alike, and a small
// push joined with one would wait for it).
const maxJoinedPush = 64

// joinKind is a kind of unit that may run joined with others of its kind.
type joinKind struct {
	// fit is how many of parts, from the first, may run as one unit; under
	// two, none runs joined.
	fit func(parts []any) int
	// run does in tx what each part's unit does alone.
	run func(tx *Tx, parts []any) error
}

// joinReq makes a unit joinable: its kind and what it carries.
type joinReq struct {
	kind *joinKind
	part any
}

// writeJoinable is Write for a unit that may run joined with the units of
// its kind queued beside it; alone it runs fn.
func (db *DB) writeJoinable(ctx context.Context, fn func(tx *Tx) error, kind *joinKind, part any) error {
	return db.write(&writeReq{ctx: ctx, fn: fn, done: make(chan error, 1), join: &joinReq{kind: kind, part: part}})
}

// runJoined runs the units that lead batch, when its first may be joined
// with those after it, as one unit, and returns how many ran so (0: none,
// the first runs alone). A joined unit that failed is rolled back to its
// savepoint and its units run alone; err is the transaction's failure.
func (w *writer) runJoined(ctx context.Context, sqltx batchTx, batch []*writeReq) (int, error) {
	units, parts := joinable(batch)
	if len(units) < 2 {
		return 0, nil
	}
	kind := units[0].join.kind
	for _, r := range units {
		r.join = nil // one try: alone if it fails
	}
	g := &writeReq{ctx: units[0].ctx, fn: func(tx *Tx) error { return kind.run(tx, parts) }}
	if err := w.runInBatch(ctx, sqltx, g, false); err != nil || g.err != nil {
		return 0, err
	}
	// What the unit emitted is published once, by its first.
	lead := units[0]
	lead.events, lead.wakes, lead.liveOrgs, lead.changed = g.events, g.wakes, g.liveOrgs, g.changed
	w.db.stats.joined.Add(int64(len(units)))
	return len(units), nil
}

// joinable is the units that lead batch and may run joined, and their
// parts: of the first's kind, their callers still waiting, as many as the
// kind fits.
func joinable(batch []*writeReq) ([]*writeReq, []any) {
	first := batch[0].join
	if first == nil {
		return nil, nil
	}
	n := 1
	for n < len(batch) && n < maxJoin && batch[n].join != nil && batch[n].join.kind == first.kind && batch[n].ctx.Err() == nil {
		n++
	}
	if n < 2 || batch[0].ctx.Err() != nil {
		return nil, nil
	}
	parts := make([]any, n)
	for i, r := range batch[:n] {
		parts[i] = r.join.part
	}
	n = first.kind.fit(parts)
	return batch[:n], parts[:n]
}
