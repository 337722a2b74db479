package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesPriceLists() {
	svc := s.svc.PriceLists
	s.handle(&Route{Method: "GET", Path: "/catalog/price-lists", Tag: "catalog", Scope: kassa.ScopeCatalogRead, List: true,
		Resp: kassa.PriceList{}, Query: append([]Param{{"location_id", "string", "only lists that apply at this location"}}, pageParams...),
		Summary: "List price lists", Handler: s.listPriceLists})
	s.handle(&Route{Method: "POST", Path: "/catalog/price-lists", Tag: "catalog", Scope: kassa.ScopeCatalogWrite, Status: 201,
		Body: kassa.PriceListCreate{}, Resp: kassa.PriceList{}, Summary: "Create a price list",
		Handler: createWith("/catalog/price-lists", func(v *kassa.PriceList) string { return v.ID }, svc.CreatePriceList)})
	s.handle(&Route{Method: "GET", Path: "/catalog/price-lists/:id", Tag: "catalog", Scope: kassa.ScopeCatalogRead,
		Resp: kassa.PriceList{}, Summary: "Retrieve a price list", Handler: getBy("price list", svc.FindPriceListByID)})
	s.handle(&Route{Method: "PATCH", Path: "/catalog/price-lists/:id", Tag: "catalog", Scope: kassa.ScopeCatalogWrite,
		Body: kassa.PriceListUpdate{}, Resp: kassa.PriceList{}, Summary: "Update a price list; prices, when given, replace the list",
		Handler: updateWith("price list", svc.UpdatePriceList)})
}

func (s *Server) listPriceLists(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	locationID, err := queryID(c, "location_id")
	if err != nil {
		return err
	}
	l, err := s.svc.PriceLists.FindPriceLists(c.UserContext(), locationID, p)
	return list(c, l, err)
}
