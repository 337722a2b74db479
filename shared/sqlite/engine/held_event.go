package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"kassa.dev/sync/change"
)

// Events follow the admission of their changes (issue 21; docs/trust.md):
// an edge logs an event in the unit that wrote the row it is about, and
// pushes it after that row's changes. When the hub refused one of those
// changes (quarantined it), the event would tell a partner what the
// hub's own API contradicts — order.completed for an order the hub shows
// open — so the hub holds it (migration 0027): not logged, not queued
// for webhooks, not seen by automations, until every quarantined change
// of its subject it waits on was admitted (re-applied). A change ops
// resolve another way leaves the event held.

// holdEvent holds c, an edge's admitted event, when its subject (the row
// its data names, or the order of a line, payment or refund) has changes
// in quarantine. It reports whether it held it.
func (a *Applier) holdEvent(ctx context.Context, c *change.Change) (bool, error) {
	if c.Entity != EntEvent.Name {
		return false, nil
	}
	if empty, err := a.quarantineEmpty(ctx); err != nil || empty {
		return false, err
	}
	data, _ := c.Fields["data"].(string)
	var subject struct {
		ID string `json:"id"`
	}
	if json.Unmarshal([]byte(data), &subject) != nil || subject.ID == "" {
		return false, nil
	}
	waits, err := a.quarantinedOf(ctx, c.OrgID, subject.ID)
	if err != nil || len(waits) == 0 {
		return false, err
	}
	body, err := json.Marshal(c)
	if err != nil {
		return false, err
	}
	if _, err := a.Tx.ExecContext(ctx, `INSERT INTO held_events (id, org_id, change, held_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING`,
		c.EntityID, c.OrgID, string(body), FmtTime(a.Tx.Now)); err != nil {
		return false, err
	}
	for _, w := range waits {
		if _, err := a.Tx.ExecContext(ctx, `INSERT INTO held_event_waits (event_id, change_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, c.EntityID, w); err != nil {
			return false, err
		}
	}
	if a.held == nil {
		a.held = map[string]bool{}
	}
	a.held[c.EntityID] = true
	a.waits = true
	a.Tx.DB.Log.Warn("event held: the hub refused a change of its subject", "event", c.EntityID, "subject", subject.ID, "waits", len(waits))
	return true, nil
}

// quarantineEmpty reports whether the quarantine holds nothing, asked
// once per batch: then no event waits (the common case, a catch-up's
// thousands of events decode no data and look up nothing). A batch never
// adds to the quarantine (refused records go there in units of their own).
func (a *Applier) quarantineEmpty(ctx context.Context) (bool, error) {
	if a.quarantine == 0 {
		var some bool
		if err := a.Tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sync_quarantine)`).Scan(&some); err != nil {
			return false, err
		}
		a.quarantine = 1
		if some {
			a.quarantine = 2
		}
	}
	return a.quarantine == 1, nil
}

// quarantinedOf returns the ids of the org's quarantined changes of row
// id, or naming it as their order.
func (a *Applier) quarantinedOf(ctx context.Context, orgID, id string) ([]string, error) {
	rows, err := a.Tx.QueryContext(ctx, `SELECT id FROM sync_quarantine WHERE entity_id = ?2 AND org_id = ?1
		UNION SELECT id FROM sync_quarantine WHERE `+D(a.Tx).JSONText("change", "fields.order_id")+` = ?2 AND org_id = ?1`, orgID, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			return nil, err
		}
		ids = append(ids, q)
	}
	return ids, rows.Err()
}

// releaseEvents logs and delivers the held events that waited only on
// changes of this batch that were admitted (a re-applied record leaves
// the quarantine; a replay of a quarantined one is still in it).
func (a *Applier) releaseEvents(ctx context.Context, changes []change.Change) error {
	if !a.waits {
		return nil // no event waited when the batch began (preload)
	}
	ids := make([]string, len(changes))
	for i := range changes {
		ids[i] = changes[i].ID
	}
	list, _ := json.Marshal(ids)
	rows, err := a.Tx.QueryContext(ctx, `DELETE FROM held_event_waits WHERE change_id IN (SELECT j.value FROM `+D(a.Tx).JSONValues("?", "j")+`)
		AND change_id NOT IN (SELECT id FROM sync_quarantine) RETURNING event_id`, string(list))
	if err != nil {
		return err
	}
	var events []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		events = append(events, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range events {
		if err := a.releaseEvent(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// releaseEvent logs held event id and queues its webhooks, once it waits
// on nothing more.
func (a *Applier) releaseEvent(ctx context.Context, id string) error {
	var body string
	err := a.Tx.QueryRowContext(ctx, `DELETE FROM held_events WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM held_event_waits WHERE event_id = ?1)
		RETURNING change`, id).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // still waiting, or released by an earlier change of this batch
	}
	if err != nil {
		return err
	}
	var c change.Change
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		return err
	}
	fields := make(map[string]any, len(c.Fields)+2)
	for k, v := range c.Fields {
		fields[k] = ColumnValue(v)
	}
	fields["id"], fields[EntEvent.OrgCol] = c.EntityID, c.OrgID
	if err := a.insertRow(ctx, EntEvent, fields, a.clamp(c.HLC), c.Origin); err != nil {
		return err
	}
	typ, _ := c.Fields["type"].(string)
	data, _ := c.Fields["data"].(string)
	if err := a.Tx.eventLogged(ctx, c.EntityID, c.OrgID, typ, []byte(data)); err != nil {
		return err
	}
	a.Tx.wakes = append(a.Tx.wakes, loggedEvent(&c))
	a.Tx.DB.Log.Info("held event released: the changes of its subject were admitted", "event", c.EntityID)
	return nil
}
