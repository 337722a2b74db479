package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Variants and bundles (docs/catalog.md): a product's variants are made
// and listed under it; a variant is a product of its own (GET, PATCH and
// DELETE /catalog/products/{variant id}, stock by its id). A bundle is a
// product with components; its availability at a location is its scarcest
// component's.
func (s *Server) routesVariants() {
	s.handle(&Route{Method: "GET", Path: "/catalog/products/:id/variants", Tag: "catalog", Scope: kassa.ScopeCatalogRead, List: true,
		Resp: kassa.Product{}, Query: pageParams, Summary: "List a product's variants", Handler: s.listVariants})
	s.handle(&Route{Method: "POST", Path: "/catalog/products/:id/variants", Tag: "catalog", Scope: kassa.ScopeCatalogWrite, Status: 201,
		Body: kassa.VariantCreate{}, Resp: kassa.Product{},
		Summary: "Create a variant of a product (its own sku, unique in the org among products and variants: 409 naming sku; " +
			"barcodes, price and stock); an order line then names the product and the variant", Handler: s.createVariant})
	s.handle(&Route{Method: "GET", Path: "/catalog/products/:id/availability", Tag: "catalog", Scope: kassa.ScopeCatalogRead,
		Resp: kassa.Availability{}, Query: []Param{{"location_id", "string", "the location whose stock counts (required)"}},
		Summary: "How many of a product a location can sell: on-hand, or for a bundle its scarcest component's", Handler: s.availability})
}

func (s *Server) listVariants(c *fiber.Ctx) error {
	id, err := pathID(c, "product")
	if err != nil {
		return err
	}
	p, err := page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Variants.FindVariants(c.UserContext(), id, p)
	return list(c, l, err)
}

func (s *Server) createVariant(c *fiber.Ctx) error {
	id, err := pathID(c, "product")
	if err != nil {
		return err
	}
	var in kassa.VariantCreate
	if err := decode(c, &in); err != nil {
		return err
	}
	v, err := s.svc.Variants.CreateVariant(c.UserContext(), id, &in)
	if err != nil {
		return err
	}
	return created(c, "/catalog/products/"+v.ID, v)
}

func (s *Server) availability(c *fiber.Ctx) error {
	id, err := pathID(c, "product")
	if err != nil {
		return err
	}
	loc, err := queryID(c, "location_id")
	if err != nil {
		return err
	}
	location := ""
	if loc != nil {
		location = *loc
	}
	v, err := s.svc.Bundles.ProductAvailability(c.UserContext(), id, location)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, v)
}
