package kassa

import (
	"bytes"
	"encoding/json"
)

// Opt is a field of a partial update (PATCH): absent, null, or a value.
type Opt[T any] struct {
	Set   bool // the field was present in the body
	Null  bool // it was present as null
	Value T
}

// UnmarshalJSON implements json.Unmarshaler; it is only called for present fields.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// To sets *dst to o's value when o is set (a null sets the zero value):
// the merged view of a partial update, the stored resource with the
// update's fields over it, validated as a whole.
func (o Opt[T]) To(dst *T) {
	if o.Set {
		*dst = o.Value
	}
}

// Some returns a set Opt holding v.
func Some[T any](v T) Opt[T] { return Opt[T]{Set: true, Value: v} }
