package engine

// Joined pushes (join.go): the pushes of several edges queued at the hub
// apply as one unit when nothing one of them does can change what another
// reads or is checked against. Alone, a push runs preload, its steps and
// finish (the recompute of the rows it touched) in its own unit; joined,
// the pushes' first reads are one (preload), their steps run push by push
// with each push's own admitter (its edge's scope, refusals, actors), and
// one finish writes and recomputes for all. What moves is only each
// push's finish, after the steps of the pushes behind it, so pushes join
// only when
//
//   - no push names, in any of its texts (fields, actor, ids), a change or
//     row another push carries (fitPushes): its first read, which reads
//     rows' existence and their org and location, which never change,
//     cannot have been answered differently by another's writes;
//   - no two pushes touch one row to recompute, nor share a key a noun's
//     hook declares (Applier.Shares): a push's recompute reads and writes
//     only what its pushes alone touched. Apply is commutative for changes
//     of different rows (apply.go), so the joined unit leaves what the
//     pushes in turn would.
//
// Anything else (a refusal, a revoked edge, a row two pushes share found
// only on the way) fails the joined unit, which then runs push by push.

import (
	"context"
	"errors"

	"kassa.dev/sync/change"
)

// joinPushes is the kind of the hub's ingest units.
var joinPushes = &joinKind{fit: fitPushes, run: runPushes}

// errShared fails a joined unit whose pushes were found to share a row.
var errShared = errors.New("sqlite: joined pushes share a row: run alone")

// pushPart is one push, as its unit alone or a joined unit applies it.
type pushPart struct {
	ctx     context.Context
	db      *DB
	changes []change.Change
	opts    ApplyOpts
	res     applied
	// owned are the ids of its changes and of the rows they name; texts
	// every text they carry; keys the rows its records touch and the keys
	// they share (Applier.Shares), as the nouns' track hooks say (index).
	owned, texts, keys []string
}

// alone applies the push in its own unit.
func (p *pushPart) alone(tx *Tx) (err error) {
	p.res, err = p.db.ApplyTx(p.ctx, tx, p.changes, p.opts)
	return err
}

// index notes what the push owns, names and touches, for fitPushes. The
// track hooks are run here on a scratch applier: they touch rows by the
// changes' fields alone, so a push that would meet another at a row does
// not join it (and fail the unit once both applied).
func (p *pushPart) index() {
	scratch := &Applier{touched: map[*Noun]map[string]string{}, State: map[*Noun]any{}, owners: map[string]int{}}
	for i := range p.changes {
		c := &p.changes[i]
		p.owned = append(p.owned, c.ID, c.EntityID)
		p.texts = append(p.texts, c.Actor)
		for _, v := range c.Fields {
			p.texts = appendTexts(p.texts, v)
		}
		if r, ok := NounOf(c.Entity); ok && r.Track != nil {
			fields := make(map[string]any, len(c.Fields))
			for k, v := range c.Fields {
				fields[k] = ColumnValue(v)
			}
			r.Track(scratch, c, fields)
		}
	}
	for key := range scratch.owners {
		p.keys = append(p.keys, key)
	}
}

// appendTexts appends the texts v holds, and the strings quoted in a
// text of JSON (a refund's payments, an order's campaigns).
func appendTexts(texts []string, v any) []string {
	switch v := v.(type) {
	case string:
		texts = append(texts, v)
		if len(v) > 2 && (v[0] == '[' || v[0] == '{') {
			texts = appendQuoted(texts, v)
		}
	case []any:
		for _, e := range v {
			texts = appendTexts(texts, e)
		}
	case map[string]any:
		for k, e := range v {
			texts = appendTexts(append(texts, k), e)
		}
	}
	return texts
}

// appendQuoted appends the strings quoted in the JSON text s (keys and
// values alike: slices of s, unescaped only where they hold no escape).
func appendQuoted(texts []string, s string) []string {
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		texts, i = append(texts, s[i+1:min(j, len(s))]), j
	}
	return texts
}

// fitPushes is how many of parts, from the first, name nothing another
// owns and touch no row another touches.
func fitPushes(parts []any) int {
	owned, named, keys := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for k, part := range parts {
		p := part.(*pushPart)
		for _, id := range p.owned {
			if owned[id] || named[id] {
				return k
			}
		}
		for _, t := range p.texts {
			if owned[t] {
				return k
			}
		}
		for _, key := range p.keys {
			if keys[key] {
				return k
			}
		}
		for _, id := range p.owned {
			owned[id] = true
		}
		for _, t := range p.texts {
			named[t] = true
		}
		for _, key := range p.keys {
			keys[key] = true
		}
	}
	return len(parts)
}

// runPushes applies parts, pushes, as one unit.
func runPushes(tx *Tx, parts []any) error {
	ps := make([]*pushPart, len(parts))
	for i, part := range parts {
		ps[i] = part.(*pushPart)
	}
	return ps[0].db.applyJoined(ps[0].ctx, tx, ps)
}

// applyJoined applies pushes ps in tx, each with its own admitter, their
// first reads and finish shared; the rows they touched and the conflicts
// recorded are the first's result.
func (db *DB) applyJoined(ctx context.Context, tx *Tx, ps []*pushPart) error {
	tx.derived = true // events a merge raises are this node's own finding
	a := &Applier{Tx: tx, touched: map[*Noun]map[string]string{}, State: map[*Noun]any{}, owners: map[string]int{}}
	ads := make([]*Admitter, len(ps))
	var all []change.Change
	for k, p := range ps {
		ads[k] = &Admitter{Tx: tx, From: *p.opts.From, State: a.State}
		all = append(all, p.changes...)
		p.res = applied{}
	}
	a.Admitter = ads[0]
	if err := a.preload(ctx, all, ads); err != nil {
		return err
	}
	for k, p := range ps {
		a.Admitter, a.segment = ads[k], k
		if err := a.steps(ctx, p.changes, p.opts, &p.res.ApplyResult); err != nil {
			return err
		}
		if a.shared {
			return errShared
		}
	}
	a.Admitter, a.segment = ads[0], -1 // a row touched from here on is no push's alone
	if err := a.finish(ctx, all, ps[0].opts, &ps[0].res); err != nil {
		return err
	}
	if a.shared {
		return errShared
	}
	return nil
}

// Shares notes that the change being applied reads or derives from the
// row key (a noun's name and its key: Touch's, or a hook's own) what its
// push's recompute may change: in a joined unit, two pushes that share one
// run alone (ingest.go). Elsewhere it does nothing.
func (a *Applier) Shares(key string) {
	if a.owners == nil {
		return
	}
	if o, ok := a.owners[key]; a.segment < 0 || ok && o != a.segment {
		a.shared = true
		return
	}
	a.owners[key] = a.segment
}

// SharesWith is Shares for the push that touched row of n, from a
// recompute hook (which runs once for a joined unit's pushes).
func (a *Applier) SharesWith(n *Noun, row, key string) {
	if a.owners == nil {
		return
	}
	o, ok := a.owners[n.Name+"\x00"+row]
	if !ok {
		a.shared = true
		return
	}
	segment := a.segment
	a.segment = o
	a.Shares(key)
	a.segment = segment
}

// shareRows has ad use what from's first read found (its rows, actors and
// referenced orgs): read once for a joined unit's pushes, whose rows are
// their own (fitPushes).
func (ad *Admitter) shareRows(from *Admitter) {
	if ad == from {
		return
	}
	if from.refOrgs == nil {
		from.refOrgs = map[string]string{}
	}
	ad.rowsAt, ad.asked, ad.actors, ad.refOrgs = from.rowsAt, from.asked, from.actors, from.refOrgs
}
