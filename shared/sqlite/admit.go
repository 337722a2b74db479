package sqlite

import (
	"encoding/json"
	"errors"
	"slices"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// The field checks the nouns' admission checks share (trust.go runs them).

// asInput decodes a change's fields into an API input struct, so that the
// API's own Validate judges them. Column values that are JSON text (lists,
// objects) are decoded first.
func asInput(f map[string]any, into any) error {
	m := make(map[string]any, len(f))
	for k, v := range f {
		if s, ok := v.(string); ok && len(s) > 0 && (s[0] == '[' || s[0] == '{') {
			var j any
			if json.Unmarshal([]byte(s), &j) == nil {
				m[k] = j
				continue
			}
		}
		if i, ok := v.(int64); ok && (k == "is_active" || k == "required") {
			m[k] = i != 0
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(b, into)
	}
	if err != nil {
		return refuse(RefusedValue, "fields of the wrong type: %v", err)
	}
	return nil
}

// validated turns a domain validation error into a refusal.
func validated(err error) error {
	if err == nil {
		return nil
	}
	var ke *kassa.Error
	if errors.As(err, &ke) && len(ke.Fields) > 0 {
		return refuse(RefusedValue, "%s %s", ke.Fields[0].Field, ke.Fields[0].Message)
	}
	return refuse(RefusedValue, "%v", err)
}

// checkAs validates an insert with the create input's rules and an update
// with the update input's.
func checkAs[C interface{ Validate() error }, U interface{ Validate() error }](c *change.Change, f map[string]any, create C, update U) error {
	if c.Op == change.OpInsert {
		if err := asInput(f, create); err != nil {
			return err
		}
		return validated(create.Validate())
	}
	if err := asInput(f, update); err != nil {
		return err
	}
	return validated(update.Validate())
}

// Bounds on the numbers a pushed record may carry are the API's
// (kassa/money.go), so that every sum of them stays far from overflowing.
const (
	maxQuantity = kassa.MaxLineQuantity
	maxAmount   = kassa.MaxMoney
	maxPoints   = 1_000_000_000
)

func intField(f map[string]any, k string) (int64, bool) {
	v, ok := f[k].(int64)
	return v, ok
}

// within refuses field k unless it is an integer in [lo, hi]; absent is
// allowed unless required.
func within(f map[string]any, k string, lo, hi int64, required bool) error {
	v, present := f[k]
	if !present || v == nil {
		if required {
			return refuse(RefusedValue, "%s is required", k)
		}
		return nil
	}
	n, ok := v.(int64)
	if !ok || n < lo || n > hi {
		return refuse(RefusedValue, "%s must be a whole number from %d to %d", k, lo, hi)
	}
	return nil
}

// oneOf refuses field k unless it is one of the values (absent is allowed
// unless required).
func oneOf(f map[string]any, k string, required bool, values ...string) error {
	v, present := f[k]
	if !present || v == nil {
		if required {
			return refuse(RefusedValue, "%s is required", k)
		}
		return nil
	}
	if s, ok := v.(string); !ok || !slices.Contains(values, s) {
		return refuse(RefusedValue, "%s must be one of %v", k, values)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
