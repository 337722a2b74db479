package kassa

import "strings"

// MaxStockQuantity bounds every quantity of an adjustment or a transfer and
// every reorder point (10^9), so that sums of movements cannot overflow.
const MaxStockQuantity = 1_000_000_000

// MaxTransferLines is the most lines one transfer may have.
const MaxTransferLines = 200

// Validate checks an adjustment on its own; the store checks that the
// location and the product exist in the org. The quantity rules depend on
// the reason: "count" takes the counted on-hand (0 or more); "received" and
// "return" take a positive quantity; "damaged", "theft" and "wastage" take
// the quantity lost, positive or negative (see Delta); "correction" takes a
// non-zero signed change.
func (in *StockAdjust) Validate() error {
	var v Validation
	v.Check(ValidID(in.LocationID), "location_id", "is required: the id of a location")
	v.Check(ValidID(in.ProductID), "product_id", "is required: the id of a product")
	q := in.Quantity
	inRange := q >= -MaxStockQuantity && q <= MaxStockQuantity
	switch in.Reason {
	case ReasonCount:
		v.Check(q >= 0 && inRange, "quantity", "must be the counted on-hand: 0 to 10^9")
	case ReasonReceived, ReasonReturn:
		v.Check(q > 0 && inRange, "quantity", "must be greater than zero (at most 10^9) for reason "+in.Reason)
	case ReasonDamaged, ReasonTheft, ReasonWastage:
		v.Check(q != 0 && inRange, "quantity", "must be the non-zero quantity lost (at most 10^9); it is taken off the stock")
	case ReasonCorrection:
		v.Check(q != 0 && inRange, "quantity", "must be a non-zero signed change of at most 10^9")
	case "":
		v.Add("reason", "is required: one of %s", strings.Join(AdjustReasons, ", "))
	default:
		v.Add("reason", "must be one of %s", strings.Join(AdjustReasons, ", "))
	}
	v.Check(ValidText(in.Note, 500), "note", "must be at most 500 characters of text")
	if in.ReorderPoint != nil {
		v.Check(*in.ReorderPoint >= 0 && *in.ReorderPoint <= MaxStockQuantity, "reorder_point", "must be 0 to 10^9")
	}
	return v.Err()
}

// Delta returns the signed stock change of a validated adjustment whose
// reason is not "count": losses (damaged, theft, wastage) always reduce the
// stock, whatever the sign of Quantity; the other reasons take it as given.
func (in *StockAdjust) Delta() int64 {
	switch in.Reason {
	case ReasonDamaged, ReasonTheft, ReasonWastage:
		if in.Quantity > 0 {
			return -in.Quantity
		}
	}
	return in.Quantity
}

// Validate checks a transfer on its own: two different locations, 1–200
// lines of distinct products with positive quantities. The store checks that
// the locations and products exist in the org.
func (in *TransferCreate) Validate() error {
	var v Validation
	v.Check(ValidID(in.FromLocationID), "from_location_id", "is required: the id of a location")
	v.Check(ValidID(in.ToLocationID), "to_location_id", "is required: the id of a location")
	if ValidID(in.FromLocationID) && in.FromLocationID == in.ToLocationID {
		v.Add("to_location_id", "must differ from from_location_id")
	}
	v.Check(ValidText(in.Notes, 2000), "notes", "must be at most 2000 characters of text")
	if len(in.Lines) == 0 || len(in.Lines) > MaxTransferLines {
		v.Add("lines", "must have 1-%d lines", MaxTransferLines)
		return v.Err()
	}
	seen := map[string]bool{}
	for i, l := range in.Lines {
		var msg string
		switch {
		case !ValidID(l.ProductID):
			msg = "product_id must be the id of a product"
		case l.Quantity <= 0 || l.Quantity > MaxStockQuantity:
			msg = "quantity must be 1 to 10^9"
		case seen[l.ProductID]:
			msg = "product " + l.ProductID + " is listed twice"
		}
		if msg != "" {
			v.Add("lines", "line %d: %s", i+1, msg)
			break
		}
		seen[l.ProductID] = true
	}
	return v.Err()
}
