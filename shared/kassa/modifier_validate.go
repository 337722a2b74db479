package kassa

// Validate checks the fields present in a modifier group update on their
// own: which may not be null and the form of each. Rules that span fields
// (selections against options) need the stored group: the store merges the
// update into it and validates the result as a ModifierGroupCreate.
func (in *ModifierGroupUpdate) Validate() error {
	var v Validation
	if in.Name.Set {
		v.Check(!in.Name.Null && in.Name.Value != "" && ValidText(in.Name.Value, 200), "name", "must be 1-200 characters of text")
	}
	v.Check(!in.Required.Null, "required", "must be true or false")
	v.Check(!in.MinSelections.Null, "min_selections", "must be a number")
	v.Check(!in.MaxSelections.Null, "max_selections", "must be a number")
	v.Check(!in.Options.Null, "options", "must have 1-50 options")
	if in.ProductIDs.Set {
		checkIDs(&v, "product_ids", in.ProductIDs.Value)
	}
	return v.Err()
}
