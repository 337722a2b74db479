// Package change defines the change record: the unit of replication.
//
// Every write of a replicated row writes one Change to the node's outbox in
// the same transaction. The record names the entity and row, the operation,
// the fields it set with their new values, the HLC stamp of the write and
// the node it came from. Shipping, routing and applying records is the job of
// the rest of this module; the record itself is plain data.
package change

import (
	"encoding/json"
	"fmt"

	"kassa.dev/sync/hlc"
)

// Op is what a change did to its row.
type Op string

// The operations. Deletes of replicated rows are tombstones: the row stays,
// marked deleted, so that a late update cannot resurrect it.
const (
	OpInsert Op = "insert"
	OpUpdate Op = "update"
	OpDelete Op = "delete"
)

// Valid reports whether op is one of the known operations.
func (op Op) Valid() bool { return op == OpInsert || op == OpUpdate || op == OpDelete }

// Change is one replicated row write.
type Change struct {
	ID         string         `json:"id"`                    // UUIDv7, also the JetStream Nats-Msg-Id
	OrgID      string         `json:"org_id"`                // tenant of the row
	LocationID string         `json:"location_id,omitempty"` // set for location-scoped rows (orders, stock)
	Entity     string         `json:"entity"`                // e.g. "product"
	EntityID   string         `json:"entity_id"`             // id of the row
	Op         Op             `json:"op"`
	Fields     map[string]any `json:"fields"` // changed fields and their new values
	HLC        hlc.Timestamp  `json:"hlc"`
	Origin     string         `json:"origin"` // node id that made the change
	// Actor is the user (or OAuth client) whose request made the change;
	// empty for the node's own work (forwarding offline payments, sync).
	// The hub replays authorization for it (DESIGN.md, Sync, "Trust").
	Actor string `json:"actor,omitempty"`
	// RawFields, when set, are the fields as JSON, sent in their place: a
	// reader of a log that only forwards records (an edge's push) need not
	// decode them into Fields and encode them again.
	RawFields json.RawMessage `json:"-"`
	// Decoded is what the receiving node derived from the record alone
	// before applying it (a hub decodes an edge's event data while the
	// edge's earlier push applies); never sent, nil until then.
	Decoded any `json:"-"`
}

// MarshalJSON encodes c, with RawFields as its fields when they are set.
func (c Change) MarshalJSON() ([]byte, error) {
	type plain Change
	if c.RawFields == nil {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		plain
		Fields json.RawMessage `json:"fields"`
	}{plain(c), c.RawFields})
}

// Validate reports the first structural problem of c, if any.
func (c *Change) Validate() error {
	switch {
	case c.ID == "":
		return fmt.Errorf("change: missing id")
	case c.OrgID == "":
		return fmt.Errorf("change %s: missing org", c.ID)
	case c.Entity == "" || c.EntityID == "":
		return fmt.Errorf("change %s: missing entity", c.ID)
	case !c.Op.Valid():
		return fmt.Errorf("change %s: unknown op %q", c.ID, c.Op)
	case c.Origin == "":
		return fmt.Errorf("change %s: missing origin", c.ID)
	case c.HLC.IsZero():
		return fmt.Errorf("change %s: missing hlc", c.ID)
	}
	return nil
}

// AppendJSON appends c to b as MarshalJSON encodes it, field by field:
// an edge's push encodes thousands of records a batch, and encoding/json
// re-validated every record's stored fields twice (once per Marshal that
// held them). RawFields are appended as stored: the node encoded them.
func (c *Change) AppendJSON(b []byte) ([]byte, error) {
	b = appendField(b, `{"id":`, c.ID)
	b = appendField(b, `,"org_id":`, c.OrgID)
	if c.LocationID != "" {
		b = appendField(b, `,"location_id":`, c.LocationID)
	}
	b = appendField(b, `,"entity":`, c.Entity)
	b = appendField(b, `,"entity_id":`, c.EntityID)
	b = appendField(b, `,"op":`, string(c.Op))
	b = append(b, `,"fields":`...)
	if c.RawFields != nil {
		b = append(b, c.RawFields...)
	} else {
		f, err := json.Marshal(c.Fields)
		if err != nil {
			return b, err
		}
		b = append(b, f...)
	}
	b = appendField(b, `,"hlc":`, c.HLC.String())
	b = appendField(b, `,"origin":`, c.Origin)
	if c.Actor != "" {
		b = appendField(b, `,"actor":`, c.Actor)
	}
	return append(b, '}'), nil
}

// appendField appends key and s as a JSON string: as it is when it holds
// nothing JSON escapes (ids, names, stamps), else as encoding/json has it.
func appendField(b []byte, key, s string) []byte {
	b = append(b, key...)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
