package kassa

// ApproveDiscount checks an order's manual discount against its creator
// a's discount limit and, beyond it, against the approver's: the
// approver's user id when the approval was needed (the order's
// approved_by), nil when it was not. Errors: EForbidden (no approval, or
// one that is not of a user of the org whose own limit allows it).
func ApproveDiscount(a, approver *Actor, limits DiscountLimits, gross, discount int64) (*string, error) {
	err := CheckDiscount(a, limits, gross, discount)
	if err == nil {
		return nil, nil
	}
	if approver == nil || approver.OrgID != a.OrgID || approver.UserID == "" || CheckDiscount(approver, limits, gross, discount) != nil {
		return nil, err
	}
	id := approver.UserID
	return &id, nil
}
