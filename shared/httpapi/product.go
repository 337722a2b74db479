package httpapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesProducts() {
	svc := s.svc.Products
	s.handle(&Route{Method: "GET", Path: "/catalog/products", Tag: "catalog", Scope: kassa.ScopeCatalogRead, List: true, Resp: kassa.Product{},
		Query: append([]Param{
			{"category_id", "string", "only products of this category"},
			{"is_active", "boolean", "true for active, false for archived products"},
			{"q", "string", "case-insensitive substring of name or sku, or an exact barcode (finds variants too)"},
			{"include_variants", "boolean", "true lists variants beside products (default: products only)"},
		}, pageParams...),
		Summary: "List products", Handler: s.listProducts})
	s.handle(&Route{Method: "POST", Path: "/catalog/products", Tag: "catalog", Scope: kassa.ScopeCatalogWrite, Status: 201,
		Body: kassa.ProductCreate{}, Resp: kassa.Product{}, Summary: "Create a product (sku unique per org: 409)",
		Handler: createWith("/catalog/products", func(p *kassa.Product) string { return p.ID }, svc.CreateProduct)})
	s.handle(&Route{Method: "GET", Path: "/catalog/products/:id", Tag: "catalog", Scope: kassa.ScopeCatalogRead, Resp: kassa.Product{},
		Summary: "Retrieve a product", Handler: getBy("product", svc.FindProductByID)})
	s.handle(&Route{Method: "PATCH", Path: "/catalog/products/:id", Tag: "catalog", Scope: kassa.ScopeCatalogWrite,
		Body: kassa.ProductUpdate{}, Resp: kassa.Product{}, Summary: "Update product fields (sku and barcodes are not updatable: 422)",
		Handler: updateWith("product", svc.UpdateProduct)})
	s.handle(&Route{Method: "DELETE", Path: "/catalog/products/:id", Tag: "catalog", Scope: kassa.ScopeCatalogWrite, Resp: kassa.Product{},
		Summary: "Archive (soft-delete) a product; answers 200 with the archived product", Handler: getBy("product", svc.ArchiveProduct)})
}

func (s *Server) listProducts(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.ProductFilter{Page: p, Q: c.Query("q")}
	if f.CategoryID, err = queryID(c, "category_id"); err != nil {
		return err
	}
	if f.IsActive, err = queryBool(c, "is_active"); err != nil {
		return err
	}
	if v, err := queryBool(c, "include_variants"); err != nil {
		return err
	} else if v != nil {
		f.Variants = *v
	}
	if !kassa.ValidText(f.Q, 200) || strings.ContainsAny(f.Q, "\n\t") {
		return kassa.Errorf(kassa.EBadRequest, "q must be at most 200 characters of text")
	}
	l, err := s.svc.Products.FindProducts(c.UserContext(), f)
	return list(c, l, err)
}
