package kassa

import "fmt"

// The order decisions: whether an order may be cancelled, completed or
// refunded, and what a refund takes. Pure functions over an order as read;
// the store calls them inside its unit of work and writes what they decide.

// FindLine returns the order's line with id, or nil.
func (o *Order) FindLine(id string) *LineItem {
	for i := range o.LineItems {
		if o.LineItems[i].ID == id {
			return &o.LineItems[i]
		}
	}
	return nil
}

// FindPayment returns the order's payment with id, or nil.
func (o *Order) FindPayment(id string) *Payment {
	for i := range o.Payments {
		if o.Payments[i].ID == id {
			return &o.Payments[i]
		}
	}
	return nil
}

// Cancellable says why o cannot be cancelled, if it cannot: only an open
// order without captured payments can. Errors: EConflict.
func Cancellable(o *Order) error {
	if o.Status != OrderOpen {
		return Errorf(EConflict, "order %s is %s; only an open order can be cancelled", o.Number, o.Status)
	}
	if o.PaidTotal > 0 {
		return Errorf(EConflict, "order %s has captured payments; void them before cancelling", o.Number)
	}
	return nil
}

// Completable says why o cannot be completed, if it cannot: only an open,
// fully paid order can. Errors: EConflict.
func Completable(o *Order) error {
	if o.Status != OrderOpen {
		return Errorf(EConflict, "order %s is %s, not open", o.Number, o.Status)
	}
	if o.PaidTotal < o.Total {
		return Errorf(EConflict, "order %s is not fully paid: %d of %d", o.Number, o.PaidTotal, o.Total)
	}
	return nil
}

// RefundPlan is what a refund returns: an amount and the line quantities
// it takes back (none for a refund by amount).
type RefundPlan struct {
	Amount int64
	Lines  []RefundLine
}

// Scaled keeps the plan's lines but caps its amount: what went back when a
// processor failed part-way.
func (p RefundPlan) Scaled(amount int64) RefundPlan {
	p.Amount = amount
	return p
}

// PlanRefund decides what refund request in (already Validate'd) returns of
// order o: by amount, by line quantities (each line's share of its total,
// RefundShare), or with neither everything left; never more than
// min(total, paid) less what was refunded. Errors: EConflict (the order is
// not completed or partially refunded, or nothing is left), EInvalid (an
// amount above what is left, a line not on the order or listed twice, a
// quantity above what is left of the line).
func PlanRefund(o *Order, in *RefundRequest) (RefundPlan, error) {
	if o.Status != OrderCompleted && o.Status != OrderPartiallyRefunded {
		return RefundPlan{}, Errorf(EConflict, "order %s is %s; only completed orders can be refunded", o.Number, o.Status)
	}
	refundable := min(o.Total, o.PaidTotal) - o.RefundedTotal
	if refundable <= 0 {
		return RefundPlan{}, Errorf(EConflict, "order %s has nothing left to refund", o.Number)
	}
	var plan RefundPlan
	switch {
	case in.Amount != nil:
		if *in.Amount > refundable {
			return plan, InvalidFields("the refund exceeds what was paid",
				FieldError{Field: "amount", Message: fmt.Sprintf("must be at most %d", refundable)})
		}
		plan.Amount = *in.Amount
		plan.Lines = []RefundLine{}
	case len(in.LineItems) > 0:
		seen := map[string]bool{}
		for i, rl := range in.LineItems {
			l := o.FindLine(rl.LineItemID)
			if l == nil || seen[rl.LineItemID] {
				return plan, InvalidField(lineField(i, "line_item_id"), "no such line on this order, or listed twice")
			}
			seen[rl.LineItemID] = true
			if left := l.Quantity - l.RefundedQuantity; rl.Quantity > left {
				return plan, InvalidField(lineField(i, "quantity"), fmt.Sprintf("at most %d left to refund", left))
			}
			amt := RefundShare(l.Total, l.Quantity, l.RefundedQuantity, rl.Quantity)
			plan.Lines = append(plan.Lines, RefundLine{LineItemID: l.ID, Quantity: rl.Quantity, Amount: amt})
			plan.Amount += amt
		}
		plan.Amount = min(plan.Amount, refundable)
	default: // everything left
		plan.Amount = refundable
		plan.Lines = []RefundLine{}
		for _, l := range o.LineItems {
			if left := l.Quantity - l.RefundedQuantity; left > 0 {
				plan.Lines = append(plan.Lines, RefundLine{LineItemID: l.ID, Quantity: left,
					Amount: RefundShare(l.Total, l.Quantity, l.RefundedQuantity, left)})
			}
		}
	}
	if plan.Amount <= 0 {
		return plan, Errorf(EConflict, "order %s has nothing left to refund", o.Number)
	}
	return plan, nil
}

// RefundSources splits amount over o's captured payments, newest first,
// each up to what is left of it: the part each processor is asked to
// return. Short is what the payments cannot cover (0 normally).
func RefundSources(o *Order, amount int64) (parts []RefundPayment, short int64) {
	parts = []RefundPayment{}
	for i := len(o.Payments) - 1; i >= 0 && amount > 0; i-- {
		p := o.Payments[i]
		if p.Status != PaymentCaptured && p.Status != PaymentPartiallyRefunded {
			continue
		}
		part := min(amount, p.Amount-p.RefundedAmount)
		if part <= 0 {
			continue
		}
		parts = append(parts, RefundPayment{PaymentID: p.ID, Amount: part})
		amount -= part
	}
	return parts, max(amount, 0)
}

// RefundedPaymentStatus is p's status once amount more of it is refunded.
func RefundedPaymentStatus(p *Payment, amount int64) string {
	if p.RefundedAmount+amount >= p.Amount {
		return PaymentRefunded
	}
	return PaymentPartiallyRefunded
}

// RefundedOrderStatus is o's status once its refunded total is refunded:
// refunded when all that was paid (at most the total) went back.
func RefundedOrderStatus(o *Order, refunded int64) string {
	if refunded >= min(o.Total, o.PaidTotal) {
		return OrderRefunded
	}
	return OrderPartiallyRefunded
}

// PickModifiers resolves the option ids chosen for a line of the product
// named product against the product's modifier groups, in group order: a
// group with a minimum and no choice takes its default options; each group
// must end with MinSelections–MaxSelections options. Problems lists what is
// wrong, each meant for the line's modifier_option_ids: a group with too few
// or too many choices, ids no group of the product offers.
func PickModifiers(product string, groups []*ModifierGroup, chosen []string) (mods []LineModifier, problems []string) {
	want := map[string]bool{}
	for _, o := range chosen {
		want[o] = true
	}
	mods = []LineModifier{}
	for _, g := range groups {
		var picked []ModifierOption
		for _, opt := range g.Options {
			if want[opt.ID] {
				picked = append(picked, opt)
			}
		}
		if len(picked) == 0 && g.MinSelections > 0 {
			for _, opt := range g.Options {
				if opt.IsDefault {
					picked = append(picked, opt)
				}
			}
		}
		if len(picked) < g.MinSelections || len(picked) > g.MaxSelections {
			problems = append(problems, fmt.Sprintf("%s needs %d to %d choices", g.Name, g.MinSelections, g.MaxSelections))
		}
		for _, opt := range picked {
			delete(want, opt.ID)
			mods = append(mods, LineModifier{OptionID: opt.ID, GroupID: g.ID, Name: opt.Name, PriceAdjustment: opt.PriceAdjustment})
		}
	}
	if len(want) > 0 {
		problems = append(problems, fmt.Sprintf("options not offered on %s", product))
	}
	return mods, problems
}
