package kassa

// Validate checks the fields present in a price list update on their own.
// The time window spans fields: the store merges the update into the stored
// list and validates the result as a PriceListCreate.
func (in *PriceListUpdate) Validate() error {
	var v Validation
	if in.Name.Set {
		v.Check(!in.Name.Null && in.Name.Value != "" && ValidText(in.Name.Value, 200), "name", "must be 1-200 characters of text")
	}
	if in.LocationIDs.Set {
		checkIDs(&v, "location_ids", in.LocationIDs.Value)
	}
	if in.Prices.Set {
		validatePrices(&v, in.Prices.Value)
	}
	v.Check(!in.IsActive.Null, "is_active", "must be true or false")
	return v.Err()
}
