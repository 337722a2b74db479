package kassa

import (
	"errors"
	"fmt"
)

// Kind classifies an error for the client. Kinds may only be appended to;
// package httpapi maps each to one problem document.
type Kind string

// The error kinds.
const (
	EBadRequest   Kind = "bad-request"       // malformed JSON, unknown query value, bad cursor
	EUnauthorized Kind = "unauthorized"      // missing, invalid, expired or revoked token
	EForbidden    Kind = "forbidden"         // scope or role insufficient
	ENotFound     Kind = "not-found"         // no such resource in the caller's org
	EConflict     Kind = "conflict"          // the current state forbids it
	EInvalid      Kind = "validation"        // body fields invalid or missing
	ERateLimited  Kind = "rate-limited"      // too many requests
	ETooLarge     Kind = "payload-too-large" // request body above the limit
	EInternal     Kind = "internal"          // anything unexpected; never shown to clients
	// EMethodNotAllowed: the path exists, the method does not (405 with Allow).
	EMethodNotAllowed Kind = "method-not-allowed"
	// EUnavailable: what the request needs is out of reach for now (the
	// store that owns an order is not connected to the hub); RetryAfter says
	// when to try again.
	EUnavailable Kind = "unavailable"
)

// FieldError is one invalid field of a request body.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an error meant for the client: its Message is safe to show.
type Error struct {
	Kind    Kind
	Message string
	Fields  []FieldError // for EInvalid
	// RetryAfter is set on ERateLimited and EUnavailable: seconds until a
	// retry may succeed.
	RetryAfter int
}

func (e *Error) Error() string {
	if len(e.Fields) > 0 && e.Message == "" {
		return fmt.Sprintf("kassa %s: %s %s", e.Kind, e.Fields[0].Field, e.Fields[0].Message)
	}
	if len(e.Fields) > 0 {
		return fmt.Sprintf("kassa %s: %s (%s %s)", e.Kind, e.Message, e.Fields[0].Field, e.Fields[0].Message)
	}
	return fmt.Sprintf("kassa %s: %s", e.Kind, e.Message)
}

// Errorf returns an *Error of the given kind.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// ErrorKind returns the kind of err, or EInternal when err is not an *Error.
func ErrorKind(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return EInternal
}

// InvalidField returns the EInvalid error for one invalid field. It carries
// no message: the HTTP layer words the problem ("the request body has
// invalid fields") and lists the field.
func InvalidField(field, msg string) *Error {
	return &Error{Kind: EInvalid, Fields: []FieldError{{Field: field, Message: msg}}}
}

// InvalidFields returns the EInvalid error for fields, with an optional
// summary message ("" leaves the wording to the HTTP layer, as InvalidField).
func InvalidFields(message string, fields ...FieldError) *Error {
	return &Error{Kind: EInvalid, Message: message, Fields: fields}
}

// Validation collects field errors; Err returns nil when none were added.
type Validation struct{ fields []FieldError }

// Add records that field is invalid.
func (v *Validation) Add(field, format string, args ...any) {
	v.fields = append(v.fields, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Check records message for field when ok is false.
func (v *Validation) Check(ok bool, field, message string) {
	if !ok {
		v.Add(field, "%s", message)
	}
}

// Err returns an EInvalid *Error listing the collected fields (see
// InvalidFields), or nil.
func (v *Validation) Err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return InvalidFields("", v.fields...)
}

// NotFound returns the ENotFound error for a resource, the same whether it
// does not exist or belongs to another org.
func NotFound(resource, id string) *Error {
	return Errorf(ENotFound, "%s %s not found", resource, id)
}
