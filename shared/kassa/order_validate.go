package kassa

import "slices"

// Validate checks the shape of a new order against the limits of money.go:
// 1–MaxOrderLines lines, quantities of 1–MaxLineQuantity, at most
// MaxLineModifiers options a line, discounts within range. What depends on
// the catalog (unit prices, a line's gross, the order's total) Price checks.
func (in *OrderCreate) Validate() error {
	var v Validation
	v.Check(ValidID(in.LocationID), "location_id", "is required: an id")
	if in.CustomerID != nil {
		v.Check(ValidID(*in.CustomerID), "customer_id", "must be an id")
	}
	v.Check(in.Channel == "" || slices.Contains([]string{ChannelPOS, ChannelOnline, ChannelPartner}, in.Channel),
		"channel", "must be one of pos, online, partner")
	v.Check(len(in.LineItems) >= min(1, 1-len(in.GiftCards)) && len(in.LineItems) <= MaxOrderLines, "line_items", "must have 1-100 lines (none with a gift card line)")
	checkGiftCardLines(&v, in.GiftCards)
	v.Check(ValidText(in.Notes, 2000), "notes", "must be at most 2000 characters of text")
	checkDiscount(&v, "discount", in.Discount)
	if in.VoucherCode != nil {
		v.Check(voucherRe.MatchString(NormalizeVoucher(*in.VoucherCode)), "voucher_code", "must be 3-32 letters, digits, - or _")
	}
	for i, l := range in.LineItems {
		v.Check(ValidID(l.ProductID), lineField(i, "product_id"), "is required: an id")
		v.Check(l.Quantity >= 1 && l.Quantity <= MaxLineQuantity, lineField(i, "quantity"), "must be 1-10000")
		v.Check(len(l.ModifierOptionIDs) <= MaxLineModifiers, lineField(i, "modifier_option_ids"), "must have at most 50 entries")
		for _, id := range l.ModifierOptionIDs {
			if !ValidID(id) {
				v.Add(lineField(i, "modifier_option_ids"), "entries must be ids")
				break
			}
		}
		checkDiscount(&v, lineField(i, "discount"), l.Discount)
	}
	return v.Err()
}

// Validate checks the shape of a refund request: amount or line_items, not
// both; an amount of 1–MaxMoney; at most MaxOrderLines lines with
// quantities of 1–MaxLineQuantity. What is left to refund the order decides.
func (in *RefundRequest) Validate() error {
	var v Validation
	v.Check(in.Amount == nil || len(in.LineItems)+len(in.GiftCardLineIDs) == 0, "amount", "give amount or line_items and gift_card_line_ids, not both")
	checkIDs(&v, "gift_card_line_ids", in.GiftCardLineIDs)
	v.Check(in.Amount == nil || (*in.Amount > 0 && *in.Amount <= MaxMoney), "amount", "must be 1-10^12 minor units")
	v.Check(ValidText(in.Reason, 500), "reason", "must be at most 500 characters of text")
	v.Check(len(in.LineItems) <= MaxOrderLines, "line_items", "must have at most 100 entries")
	v.Check(in.RegisterID == "" || ValidID(in.RegisterID), "register_id", "must be the id of a register")
	for i, l := range in.LineItems {
		v.Check(ValidID(l.LineItemID), lineField(i, "line_item_id"), "is required: an id")
		v.Check(l.Quantity >= 1 && l.Quantity <= MaxLineQuantity, lineField(i, "quantity"), "must be 1-10000")
	}
	return v.Err()
}

// Validate checks the fields of an order update present: notes of at most
// 2000 characters, a customer id, and a status only of cancelled (complete
// and refund have their own actions).
func (in *OrderUpdate) Validate() error {
	var v Validation
	if in.Notes.Set {
		v.Check(!in.Notes.Null && ValidText(in.Notes.Value, 2000), "notes", "must be at most 2000 characters of text")
	}
	if in.CustomerID.Set && !in.CustomerID.Null {
		v.Check(ValidID(in.CustomerID.Value), "customer_id", "must be an id")
	}
	if in.Status.Set {
		v.Check(!in.Status.Null && in.Status.Value == OrderCancelled, "status", "can only be set to cancelled; use complete and refund for the rest")
	}
	return v.Err()
}
