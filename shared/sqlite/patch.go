package sqlite

import "kassa.dev/shared/kassa"

// patch notes in cols the value an update sets for a column (an Opt that
// is Set), when it differs from old.
func patch[T any](cols map[string]any, name string, old any, o kassa.Opt[T]) {
	if o.Set {
		changed(cols, name, old, o.Value)
	}
}

// patchNullable is patch for a nullable column: a null in the update
// clears it.
func patchNullable[T any](cols map[string]any, name string, old any, o kassa.Opt[T]) {
	if o.Set {
		changed(cols, name, old, optPtr(o))
	}
}

// patchAs is patch for a value stored in a normal form (a list without
// duplicates, an absent list as an empty one): as gives that form.
func patchAs[T, U any](cols map[string]any, name string, old any, o kassa.Opt[T], as func(T) U) {
	if o.Set {
		changed(cols, name, old, as(o.Value))
	}
}

// patchIf notes name's new value in cols when set (its Opt was in the
// update) and it differs from old; for updates merged into a whole input
// and validated as one before the columns are compared (see kassa.Opt.To).
func patchIf(cols map[string]any, set bool, name string, old, new any) {
	if set {
		changed(cols, name, old, new)
	}
}

// takeAs sets *dst to o's value in its normal form (see patchAs) when o is
// set: kassa.Opt.To for a value that is stored transformed.
func takeAs[T, U any](dst *U, o kassa.Opt[T], as func(T) U) {
	if o.Set {
		*dst = as(o.Value)
	}
}

// changed adds name to cols when the new value differs from the old one, as
// compared by their stored forms.
func changed(cols map[string]any, name string, old, new any) {
	if !sameStored(old, new) {
		cols[name] = new
	}
}
