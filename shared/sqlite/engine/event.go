package engine

import (
	"context"
	"encoding/json"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// LoggedEvent is a business event as this node's event log holds it.
// Seq is its position in this node's log (local: the same event has
// another Seq at the hub than at the edge where it happened); Event.ID is
// the event's own id, the same at every node; Origin is the node where it
// happened. Event.Data is the resource in its API shape, as JSON
// (json.RawMessage).
type LoggedEvent struct {
	Seq int64
	kassa.Event
	Origin string
	// Depth is the chain depth of the automation whose action caused it
	// (event_causes, kassa.WithCauseDepth), 0 for none.
	Depth int
}

// EventsAfter returns up to limit events of the log after position after
// (0: from the start), in log order. A reader that processes them and then
// saves the last Seq, and starts again from the saved position, sees every
// event once, across restarts and crashes: an event is in the log only if
// the unit of work that caused it committed. New events are announced on
// the bus (DB.Bus), which only wakes readers and may drop announcements.
func (db *DB) EventsAfter(ctx context.Context, after int64, limit int) ([]LoggedEvent, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT seq, id, org_id, coalesce(location_id, ''), type, data, occurred_at, origin,
		coalesce((SELECT depth FROM event_causes WHERE event_id = events.id), 0)
		FROM events WHERE seq > ?`+db.dialect().Settled("seq", "events")+` ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LoggedEvent
	for rows.Next() {
		var e LoggedEvent
		var data, at string
		if err := rows.Scan(&e.Seq, &e.ID, &e.OrgID, &e.LocationID, &e.Type, &data, &at, &e.Origin, &e.Depth); err != nil {
			return nil, err
		}
		e.OccurredAt, e.Data = ParseTime(at), json.RawMessage(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Events: appended once per event id (events.id is unique), so an edge's
// event is in the hub's log once however often it arrives; checkEvent
// holds the rule.
var EntEvent = new(Noun)

func init() {
	Register(EntEvent, Noun{Name: "event", Table: "events", Merge: MergeAppend, Edge: &EdgeRule{AnyUser: true, Check: checkEvent}})
}

// checkEvent admits an edge's business event: made at that edge (its
// origin), about the edge's org (admit) and its location or the org as a
// whole, of a type in the catalog, occurred at a valid time, with data
// that is a JSON object of at most kassa.MaxEventData bytes. It does not
// tie the event to the change that caused it: an edge can still invent an
// event about its own location (docs/trust.md, open points).
func checkEvent(ctx context.Context, ad *Admitter, c *change.Change, f map[string]any) error {
	if c.Origin != ad.From.NodeID {
		return Refuse(RefusedScope, "event %s from node %s pushed by edge %s", c.EntityID, c.Origin, ad.From.NodeID)
	}
	if _, ok := f["seq"]; ok {
		return Refuse(RefusedField, "event has no writable field \"seq\"")
	}
	if loc := f["location_id"]; loc != nil && loc != ad.From.LocationID {
		return Refuse(RefusedScope, "event of location %v from the edge of location %s", loc, ad.From.LocationID)
	}
	if loc, _ := f["location_id"].(string); c.LocationID != loc {
		return Refuse(RefusedScope, "event's location %q differs from its record's %q", loc, c.LocationID)
	}
	if typ, _ := f["type"].(string); !kassa.IsEventType(typ) {
		return Refuse(RefusedValue, "event type %v is not in the catalog", f["type"])
	}
	at, _ := f["occurred_at"].(string)
	if _, err := time.Parse(TimeFormat, at); err != nil {
		return Refuse(RefusedValue, "occurred_at %q is not a time", at)
	}
	data, _ := f["data"].(string)
	if len(data) > kassa.MaxEventData {
		return Refuse(RefusedValue, "event data of %d bytes exceeds %d", len(data), kassa.MaxEventData)
	}
	obj, ok := c.Decoded.(eventData)
	if !ok {
		if obj, ok = decodeEventData(data); !ok {
			return Refuse(RefusedValue, "event data is not a JSON object")
		}
	}
	typ, _ := f["type"].(string)
	return ad.eventSubject(ctx, typ, obj)
}

// decodeEventData decodes an event's data, its members left encoded, and
// reports whether it is a JSON object (or null).
func decodeEventData(data string) (eventData, bool) {
	var obj map[string]json.RawMessage // its members decoded when asked (eventData)
	return obj, json.Unmarshal([]byte(data), &obj) == nil
}

// Prepare decodes the data of the events among changes an edge pushed
// (change.Change.Decoded), ahead of their unit: admission (checkEvent)
// then reads it from there. It needs no row and changes none.
func (db *DB) Prepare(changes []change.Change) {
	for i := range changes {
		c := &changes[i]
		if c.Entity != EntEvent.Name || c.Decoded != nil {
			continue
		}
		if data, ok := c.Fields["data"].(string); ok && len(data) <= kassa.MaxEventData {
			if obj, ok := decodeEventData(data); ok {
				c.Decoded = obj
			}
		}
	}
}

// eventData is an edge's event data with its members left encoded:
// admission compares a few of them (an order's event carries the whole
// order, which decoding into maps cost more than the rest of its check).
type eventData map[string]json.RawMessage

// value is member k decoded as encoding/json decodes into any (nil when
// absent).
func (d eventData) value(k string) any {
	var v any
	if raw, ok := d[k]; ok {
		json.Unmarshal(raw, &v) // valid: it was decoded as a member
	}
	return v
}

// all is the whole data decoded.
func (d eventData) all() map[string]any {
	out := make(map[string]any, len(d))
	for k := range d {
		out[k] = d.value(k)
	}
	return out
}
