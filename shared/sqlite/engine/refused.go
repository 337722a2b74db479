package engine

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"kassa.dev/sync/change"
)

// Refused is a pushed change the hub refused and holds in quarantine:
// what the edge that pushed it is told.
type Refused struct {
	ChangeID, Entity, EntityID, Op string
	Status                         string   // the status the record set, if any
	Fields                         []string // the names of its fields
	Reason, Error                  string
	At                             time.Time
}

// refusedOf is the refusal of c for cause.
func RefusedOf(c *change.Change, cause error, at time.Time) Refused {
	r := Refused{ChangeID: c.ID, Entity: c.Entity, EntityID: c.EntityID, Op: string(c.Op),
		Reason: QuarantineReason(cause), Error: cause.Error(), At: at, Fields: make([]string, 0, len(c.Fields))}
	for k := range c.Fields {
		if k != "id" && k != "org_id" && k != "updated_at" && k != "created_at" {
			r.Fields = append(r.Fields, k)
		}
	}
	slices.Sort(r.Fields)
	r.Status, _ = c.Fields["status"].(string)
	r.Reason = CodeIn(r.Reason, r.Error)
	return r
}

// codeIn is the refusal code the hub's words name, for a record
// quarantined as apply_failed whose error still carries one.
func CodeIn(reason, text string) string {
	if reason != "apply_failed" {
		return reason
	}
	for _, code := range RefusalCodes {
		if strings.Contains(text, code+": ") {
			return code
		}
	}
	return reason
}

// kassaKind is the "kassa <kind>: " prefix of a domain error's text.
var KassaKind = regexp.MustCompile(`kassa [a-z_]+: `)
