package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesCategories() {
	svc := s.svc.Categories
	s.handle(&Route{Method: "GET", Path: "/catalog/categories", Tag: "catalog", Scope: kassa.ScopeCatalogRead, List: true, Resp: kassa.Category{},
		Query: append([]Param{
			{"parent_id", "string", "only children of this category"},
			{"is_active", "boolean", "filter by active flag"},
		}, pageParams...),
		Summary: "List categories", Handler: s.listCategories})
	s.handle(&Route{Method: "POST", Path: "/catalog/categories", Tag: "catalog", Scope: kassa.ScopeCatalogWrite, Status: 201,
		Body: kassa.CategoryCreate{}, Resp: kassa.Category{}, Summary: "Create a category",
		Handler: createWith("/catalog/categories", func(v *kassa.Category) string { return v.ID }, svc.CreateCategory)})
	s.handle(&Route{Method: "GET", Path: "/catalog/categories/:id", Tag: "catalog", Scope: kassa.ScopeCatalogRead, Resp: kassa.Category{},
		Summary: "Retrieve a category", Handler: getBy("category", svc.FindCategoryByID)})
	s.handle(&Route{Method: "PATCH", Path: "/catalog/categories/:id", Tag: "catalog", Scope: kassa.ScopeCatalogWrite, Errors: []int{fiber.StatusConflict},
		Body: kassa.CategoryUpdate{}, Resp: kassa.Category{}, Summary: "Update a category (a parent that makes a cycle: 409)",
		Handler: updateWith("category", svc.UpdateCategory)})
}

func (s *Server) listCategories(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.CategoryFilter{Page: p}
	if f.ParentID, err = queryID(c, "parent_id"); err != nil {
		return err
	}
	if f.IsActive, err = queryBool(c, "is_active"); err != nil {
		return err
	}
	l, err := s.svc.Categories.FindCategories(c.UserContext(), f)
	return list(c, l, err)
}
