package httpapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Gift cards (docs/giftcards.md): issued here, at the hub or at an edge
// (offline too: a store sells them at the till), redeemed only through
// POST /payments/initiate with method gift_card. Reading needs
// payments:read, writing payments:write; the code is shown in full only to
// actors with payments:write. The lookup takes the code in the query
// string: it is never logged (the access log writes the path only).

func (s *Server) routesGiftCards() {
	svc := s.svc.GiftCards
	s.handle(&Route{Method: "GET", Path: "/gift-cards", Tag: "gift-cards", Scope: kassa.ScopePaymentsRead, List: true, Resp: kassa.GiftCard{},
		Query: append([]Param{
			{"status", "GiftCardStatus", "only cards in this state"},
			{"customer_id", "string", "only cards of this customer"},
		}, pageParams...),
		Summary: "List the org's gift cards; codes are masked but for their last 4 characters without payments:write", Handler: s.listGiftCards})
	s.handle(&Route{Method: "POST", Path: "/gift-cards", Tag: "gift-cards", Scope: kassa.ScopePaymentsWrite, Status: 201,
		Body: kassa.GiftCardIssue{}, Resp: kassa.GiftCard{},
		Summary: "Issue a gift card (managers, owners and partner apps; a cashier is 403): initial_amount 1 to 10^12 minor units, currency defaults to the org's, expires_at in the " +
			"future or null; the 16-character code is generated; emits gift_card.issued",
		Handler: createWith("/gift-cards", func(g *kassa.GiftCard) string { return g.ID }, svc.IssueGiftCard)})
	// Before /gift-cards/:id, which would otherwise shadow it.
	s.handle(&Route{Method: "GET", Path: "/gift-cards/lookup", Tag: "gift-cards", Scope: kassa.ScopePaymentsRead, Resp: kassa.GiftCard{},
		Query:   []Param{{"code", "string", "the card's code (case, spaces and dashes ignored)"}},
		Summary: "Look up a gift card by its code, with its balance; 404 when no card of the org has it", Handler: s.giftCardByCode})
	s.handle(&Route{Method: "GET", Path: "/gift-cards/:id", Tag: "gift-cards", Scope: kassa.ScopePaymentsRead, Resp: kassa.GiftCard{},
		Summary: "Retrieve a gift card", Handler: getBy("gift card", svc.FindGiftCardByID)})
	s.handle(&Route{Method: "GET", Path: "/gift-cards/:id/transactions", Tag: "gift-cards", Scope: kassa.ScopePaymentsRead, List: true,
		Resp: kassa.GiftCardTransaction{}, Query: pageParams,
		Summary: "List a gift card's transactions (issue, redeem, refund), oldest first", Handler: s.listGiftCardTransactions})
	s.handle(&Route{Method: "POST", Path: "/gift-cards/:id/disable", Tag: "gift-cards", Scope: kassa.ScopePaymentsWrite, Resp: kassa.GiftCard{},
		Summary: "Disable a gift card: it pays nothing from then on; refunds still return money to it", Handler: getBy("gift card", svc.DisableGiftCard)})
	s.handle(&Route{Method: "POST", Path: "/gift-cards/:id/enable", Tag: "gift-cards", Scope: kassa.ScopePaymentsWrite, Resp: kassa.GiftCard{},
		Summary: "Re-enable a disabled gift card (a manager, an owner or a partner app): it pays again from the balance it kept; an active card is unchanged",
		Handler: getBy("gift card", svc.EnableGiftCard)})
}

func (s *Server) listGiftCards(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.GiftCardFilter{Page: p, Status: strings.Clone(c.Query("status"))}
	switch f.Status {
	case "", kassa.GiftCardActive, kassa.GiftCardDisabled, kassa.GiftCardPending:
	default:
		return kassa.Errorf(kassa.EBadRequest, "status must be active, disabled or pending")
	}
	if f.CustomerID, err = queryID(c, "customer_id"); err != nil {
		return err
	}
	l, err := s.svc.GiftCards.FindGiftCards(c.UserContext(), f)
	return list(c, l, err)
}

func (s *Server) giftCardByCode(c *fiber.Ctx) error {
	code := strings.Clone(c.Query("code"))
	if code == "" {
		return kassa.Errorf(kassa.EBadRequest, "code is required")
	}
	g, err := s.svc.GiftCards.FindGiftCardByCode(c.UserContext(), code)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, g)
}

func (s *Server) listGiftCardTransactions(c *fiber.Ctx) error {
	id, err := pathID(c, "gift card")
	if err != nil {
		return err
	}
	p, err := page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.GiftCards.FindGiftCardTransactions(c.UserContext(), id, p)
	return list(c, l, err)
}
