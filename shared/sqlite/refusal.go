package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// A refused change is visible at both ends (docs/trust.md, "A refused
// change at the store"). The hub tells the edge which of its changes it
// refused — in the reply to the push that carried them, and the whole
// open list in every pull's reply — and the edge keeps them in
// sync_refusals (migration 0022) for its status and console. Both ends
// name rows as people do (order numbers, not ids) and word a refusal as
// a sentence (describe).

// EdgeRefusals returns, at the hub, the open quarantined records the edge
// nodeID of org pushed (listed under its location), newest first, at most
// limit, and how many there are.
func (db *DB) EdgeRefusals(ctx context.Context, orgID, locationID, nodeID string, limit int) ([]Refused, int, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT q.change, q.error, q.created_at FROM sync_conflicts c
		JOIN sync_quarantine q ON q.id = `+engine.D(db.Reader).JSONText("c.remote", "id")+`
		WHERE c.org_id = ? AND c.status = 'open' AND c.location_id = ? AND c.kind = 'quarantined'
		AND `+engine.D(db.Reader).JSONText("c.remote", "origin")+` = ? ORDER BY c.detected_at DESC, c.id`, orgID, locationID, nodeID)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out, n := []Refused{}, 0
	for rows.Next() {
		var body, msg, at string
		if err := rows.Scan(&body, &msg, &at); err != nil {
			return nil, 0, err
		}
		if n++; len(out) >= limit {
			continue
		}
		var c change.Change
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			return nil, 0, err
		}
		out = append(out, refusedOf(&c, errors.New(msg), parseTime(at)))
	}
	return out, n, rows.Err()
}

// metaRefusedTotal keeps, at an edge, how many refusals the hub last
// counted (it lists only the newest).
const metaRefusedTotal = "sync_refused_total"

// KeepRefusals records, at an edge, refusals the hub reported. With
// replace, rs is the hub's whole open list (of total): the others are
// forgotten, since the hub re-applied or resolved them.
func (db *DB) KeepRefusals(ctx context.Context, rs []Refused, total int, replace bool) error {
	return db.Write(ctx, func(tx *Tx) error {
		if replace {
			if _, err := tx.ExecContext(ctx, `DELETE FROM sync_refusals`); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO node_meta (key, value) VALUES (?, ?)
				ON CONFLICT(key) DO UPDATE SET value = excluded.value`, metaRefusedTotal, strconv.Itoa(total)); err != nil {
				return err
			}
		}
		for _, r := range rs {
			fields, _ := json.Marshal(r.Fields)
			if _, err := tx.ExecContext(ctx, `INSERT INTO sync_refusals (change_id, entity, entity_id, op, status, fields, reason, error, refused_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(change_id) DO UPDATE SET reason = excluded.reason, error = excluded.error`,
				r.ChangeID, r.Entity, r.EntityID, r.Op, r.Status, string(fields), r.Reason, r.Error, fmtTime(r.At)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Refusals returns, at an edge, its changes the hub refused, newest first
// (at most limit), each named and worded, and how many there are.
func (db *DB) Refusals(ctx context.Context, limit int) ([]kassa.SyncRefusal, int, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT change_id, entity, entity_id, op, status, fields, reason, error, refused_at
		FROM sync_refusals ORDER BY refused_at DESC, change_id`)
	if err != nil {
		return nil, 0, err
	}
	var rs []Refused
	for rows.Next() {
		var r Refused
		var fields, at string
		if err := rows.Scan(&r.ChangeID, &r.Entity, &r.EntityID, &r.Op, &r.Status, &fields, &r.Reason, &r.Error, &at); err != nil {
			rows.Close()
			return nil, 0, err
		}
		json.Unmarshal([]byte(fields), &r.Fields)
		r.At = parseTime(at)
		rs = append(rs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	total, _ := db.Meta(ctx, metaRefusedTotal)
	n, _ := strconv.Atoi(total)
	out := make([]kassa.SyncRefusal, 0, min(len(rs), limit))
	for _, r := range rs[:min(len(rs), limit)] {
		subject, summary := describe(ctx, db.Reader, r)
		out = append(out, kassa.SyncRefusal{ChangeID: r.ChangeID, Entity: r.Entity, EntityID: r.EntityID, Reason: r.Reason,
			Error: r.Error, Subject: subject, Summary: summary, RefusedAt: r.At})
	}
	return out, max(n, len(rs)), nil
}

// describe names the row of a refused change and words the refusal as a
// sentence, with the rows this node has.
func describe(ctx context.Context, q querier, r Refused) (subject, summary string) {
	n := namer{ctx: ctx, q: q, ids: map[string]string{}}
	subject = n.row(r.Entity, r.EntityID, nil)
	return subject, n.refusal(r, subject)
}

// namer names rows by what people know them by, remembering every id it
// named so that the hub's own words can use the names too.
type namer struct {
	ctx context.Context
	q   querier
	ids map[string]string // id → name
}

// row names a row of entity; fields (a record's, may be nil) stand in for
// a row this node does not have.
func (n *namer) row(entity, id string, fields map[string]any) string {
	str := func(k string) string { s, _ := fields[k].(string); return s }
	var name string
	switch entity {
	case "order":
		name = n.order(id, str("number"))
	case "payment", "refund":
		var method, order string
		var amount sql.NullInt64
		table := map[string]string{"payment": "payments", "refund": "refunds"}[entity]
		cols := "method, amount, order_id"
		if entity == "refund" {
			cols = "'', amount, order_id"
		}
		if n.q.QueryRowContext(n.ctx, "SELECT "+cols+" FROM "+table+" WHERE id = ?", id).Scan(&method, &amount, &order) != nil {
			method, order = str("method"), str("order_id")
			if v, ok := fields["amount"].(float64); ok {
				amount = sql.NullInt64{Int64: int64(v), Valid: true}
			}
		}
		name = strings.TrimSpace(method + " " + entity)
		if amount.Valid {
			name += " of " + decimal(amount.Int64)
		}
		if order != "" {
			name += " for " + n.order(order, "")
		}
	case "order_line", "order_history":
		var order string
		table := map[string]string{"order_line": "order_lines", "order_history": "order_history"}[entity]
		if n.q.QueryRowContext(n.ctx, "SELECT order_id FROM "+table+" WHERE id = ?", id).Scan(&order) != nil {
			order = str("order_id")
		}
		name = map[string]string{"order_line": "a line", "order_history": "a history entry"}[entity] + " of " + n.order(order, "")
	case "event":
		typ := str("type")
		n.q.QueryRowContext(n.ctx, `SELECT type FROM events WHERE id = ?`, id).Scan(&typ)
		name = strings.TrimSpace(typ + " event")
	case "user":
		var email string
		n.q.QueryRowContext(n.ctx, `SELECT email FROM users WHERE id = ?`, id).Scan(&email)
		name = "user " + email
		if email == "" {
			name = "an unknown user (" + shortID(id) + ")"
		}
	case "customer":
		var first, last string
		if n.q.QueryRowContext(n.ctx, `SELECT first_name, last_name FROM customers WHERE id = ?`, id).Scan(&first, &last) != nil {
			first, last = str("first_name"), str("last_name")
		}
		name = strings.TrimSpace("customer " + strings.TrimSpace(first+" "+last))
	case "unknown":
		name = "an unknown row (" + shortID(id) + ")"
	default:
		name = n.named(entity, id, str("name"))
	}
	n.ids[id] = name
	return name
}

// order names an order by its number ("order 1042").
func (n *namer) order(id, number string) string {
	if id == "" {
		return "an order"
	}
	if number == "" && n.q.QueryRowContext(n.ctx, `SELECT number FROM orders WHERE id = ?`, id).Scan(&number) != nil {
		// An order the hub refused: its number is in the quarantined record.
		var quarantined sql.NullString
		d := engine.D(n.q)
		n.q.QueryRowContext(n.ctx, `SELECT `+d.JSONText("change", "fields.number")+` FROM sync_quarantine
			WHERE entity_id = ? AND `+d.JSONText("change", "entity")+` = 'order' AND `+d.JSONText("change", "op")+` = 'insert'`, id).Scan(&quarantined)
		number = quarantined.String
	}
	name := "order " + number
	if number == "" {
		name = "an order this node does not have (" + shortID(id) + ")"
	}
	n.ids[id] = name
	return name
}

// namedTables are the entities whose rows carry a name.
var namedTables = map[string]string{"category": "categories", "product": "products", "modifier_group": "modifier_groups",
	"price_list": "price_lists", "loyalty_program": "loyalty_programs", "campaign": "campaigns", "location": "locations"}

// named names a row by its name column, else by a short id.
func (n *namer) named(entity, id, name string) string {
	words := strings.ReplaceAll(entity, "_", " ")
	if table, ok := namedTables[entity]; ok {
		n.q.QueryRowContext(n.ctx, "SELECT name FROM "+table+" WHERE id = ?", id).Scan(&name)
	}
	if entity == "stock_level" {
		n.q.QueryRowContext(n.ctx, `SELECT p.name FROM stock_levels s JOIN products p ON p.id = s.product_id WHERE s.id = ?`, id).Scan(&name)
		words = "stock of"
	}
	if name == "" {
		return words + " " + shortID(id)
	}
	return words + " " + name
}

// refusal words the refusal of r, whose row is subject, as a sentence.
func (n *namer) refusal(r Refused, subject string) string {
	action := "a change to " + subject
	switch {
	case r.Op == string(change.OpInsert) && strings.HasPrefix(subject, "a "):
		action = "a new " + strings.TrimPrefix(subject, "a ")
	case r.Op == string(change.OpInsert):
		action = "the new " + subject
	case r.Status != "":
		action = "marking " + subject + " " + strings.ReplaceAll(r.Status, "_", " ")
	case len(r.Fields) > 0:
		action = "the change of " + strings.Join(r.Fields, ", ") + " of " + subject
	}
	r.Reason = codeIn(r.Reason, r.Error)
	detail := r.Error
	if i := strings.LastIndex(detail, r.Reason+": "); i >= 0 {
		detail = detail[i+len(r.Reason)+2:] // past "apply <entity> <id> <change>: "
	}
	detail = kassaKind.ReplaceAllString(detail, "")
	for id, name := range n.ids {
		detail = strings.ReplaceAll(detail, strings.SplitN(name, " ", 2)[0]+" "+id, name)
		detail = strings.ReplaceAll(detail, id, name)
	}
	detail = uuidPattern.ReplaceAllStringFunc(detail, func(id string) string {
		id = strings.Trim(id, `"`)
		return n.row(n.kindOf(id), id, nil)
	})
	why := map[string]string{RefusedEntity: "stores may not write this", RefusedField: "a field stores may not change",
		RefusedScope: "it belongs to another org or store", RefusedReference: "it builds on a refused or foreign row",
		RefusedActor: "the user who made it may not (or no longer may) do this", RefusedValue: "a value does not hold"}[r.Reason]
	if why == "" {
		why = "it could not be applied"
	}
	return fmt.Sprintf("The hub refused %s — %s: %s.", action, why, strings.TrimSuffix(detail, "."))
}

// uuidPattern matches the ids of rows in the hub's words.
var uuidPattern = regexp.MustCompile(`"?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"?`)

// kindOf guesses what a bare id in the hub's words is a row of.
func (n *namer) kindOf(id string) string {
	for _, e := range []string{"order", "payment", "customer", "product", "user"} {
		var one int
		if n.q.QueryRowContext(n.ctx, "SELECT 1 FROM "+nouns[e].Table+" WHERE id = ?", id).Scan(&one) == nil {
			return e
		}
	}
	return "unknown"
}

// decimal renders minor units as a decimal amount (two places).
func decimal(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// conflictSummaries word the conflicts merges record; %s is the subject.
var conflictSummaries = map[string]string{
	kassa.ConflictOversold:          "%s went below zero on hand: stores sold more than there was.",
	kassa.ConflictOverdrawn:         "%s went below zero: points were spent twice.",
	kassa.ConflictOverpaid:          "%s was paid beyond its total at two nodes.",
	kassa.ConflictOverrefunded:      "%s was refunded beyond what was paid at two nodes.",
	kassa.ConflictCancelLost:        "A cancel of %s lost to its completion elsewhere.",
	kassa.ConflictClockClamped:      "A change of %s was stamped ahead of this node's clock and clamped.",
	kassa.ConflictDuplicateKey:      "%s repeated a unique value of another row and was renamed.",
	kassa.ConflictVoucherOverused:   "%s used a voucher beyond its limit.",
	kassa.ConflictGiftCardOverdrawn: "%s was redeemed below zero by stores that were offline.",
}

// describeConflict fills c's subject and summary from the rows q has.
func describeConflict(ctx context.Context, q querier, c *kassa.Conflict) {
	n := namer{ctx: ctx, q: q, ids: map[string]string{}}
	if c.Kind != kassa.ConflictQuarantined {
		c.Subject = n.row(c.Entity, c.EntityID, nil)
		if f, ok := conflictSummaries[c.Kind]; ok {
			c.Summary = upperFirst(fmt.Sprintf(f, c.Subject))
		} else {
			c.Summary = upperFirst(strings.ReplaceAll(c.Kind, "_", " ") + " on " + c.Subject + ".")
		}
		return
	}
	var ch change.Change
	var local struct{ Error, Reason string }
	json.Unmarshal(c.Remote, &ch)
	json.Unmarshal(c.Local, &local)
	c.Subject = n.row(c.Entity, c.EntityID, ch.Fields)
	r := refusedOf(&ch, errors.New(local.Error), c.DetectedAt)
	r.Reason = local.Reason
	c.Summary = n.refusal(r, c.Subject)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
