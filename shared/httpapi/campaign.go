package httpapi

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Campaigns (docs/campaigns.md): served by hub and edge alike. They are
// made at the hub by head office; an enrolled edge answers a write with
// 409 (its store refuses hub-only data) and prices its orders with the
// campaigns sync brought. Scopes: reading is catalog:read (a till needs
// them), writing catalog:write, analytics reports:read.
func (s *Server) routesCampaigns() {
	svc := s.svc.Campaigns
	s.handle(&Route{Method: "GET", Path: "/campaigns", Tag: "campaigns", Scope: kassa.ScopeCatalogRead, List: true,
		Resp: kassa.Campaign{}, Query: append([]Param{{"status", "CampaignStatus", "only campaigns in this state (as shown: the clock's moves count)"}}, pageParams...),
		Summary: "List campaigns", Handler: s.listCampaigns})
	s.handle(&Route{Method: "POST", Path: "/campaigns", Tag: "campaigns", Scope: kassa.ScopeCatalogWrite, Status: 201,
		Body: kassa.CampaignCreate{}, Resp: kassa.Campaign{},
		Summary: "Create a campaign (discount, offer, promotion); it is a draft until launched",
		Handler: createWith("/campaigns", func(v *kassa.Campaign) string { return v.ID }, svc.CreateCampaign)})
	s.handle(&Route{Method: "GET", Path: "/campaigns/:id", Tag: "campaigns", Scope: kassa.ScopeCatalogRead,
		Resp: kassa.Campaign{}, Summary: "Retrieve a campaign", Handler: getBy("campaign", svc.FindCampaignByID)})
	s.handle(&Route{Method: "PATCH", Path: "/campaigns/:id", Tag: "campaigns", Scope: kassa.ScopeCatalogWrite,
		Body: kassa.CampaignUpdate{}, Resp: kassa.Campaign{},
		Summary: "Update a campaign's status or rules: status moves active ⇄ paused and to ended (409 otherwise); " +
			"rules and the other terms change only while it is a draft or paused (409 otherwise); name and ends_at any time before it ended",
		Handler: updateWith("campaign", svc.UpdateCampaign)})
	s.handle(&Route{Method: "POST", Path: "/campaigns/:id/launch", Tag: "campaigns", Scope: kassa.ScopeCatalogWrite,
		Resp: kassa.Campaign{},
		Summary: "Launch a draft campaign: scheduled when starts_at is ahead, else active; any other status is 409. " +
			"Takes no body (an empty JSON object is accepted).",
		Handler: actionBy("campaign", svc.LaunchCampaign)})
	for _, path := range []string{"/campaigns/:id/analytics", "/campaigns/:id/stats"} {
		s.handle(&Route{Method: "GET", Path: path, Tag: "campaigns", Scope: kassa.ScopeReportsRead,
			Resp: kassa.CampaignStats{}, Summary: "Campaign performance: redemptions, orders, discount given and revenue of the " +
				"orders that used it, per day and per location; zeros before any redemption (/stats is the same)",
			Handler: getBy("campaign", svc.CampaignStats)})
	}
}

func (s *Server) listCampaigns(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.CampaignFilter{Page: p, Status: c.Query("status")}
	if f.Status != "" && !slices.Contains(kassa.Enums["CampaignStatus"], f.Status) {
		return kassa.Errorf(kassa.EBadRequest, "status must be one of %s", strings.Join(kassa.Enums["CampaignStatus"], ", "))
	}
	l, err := s.svc.Campaigns.FindCampaigns(c.UserContext(), f)
	return list(c, l, err)
}
