package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesModifierGroups() {
	svc := s.svc.ModifierGroups
	s.handle(&Route{Method: "GET", Path: "/catalog/modifiers/groups", Tag: "catalog", Scope: kassa.ScopeCatalogRead, List: true,
		Resp: kassa.ModifierGroup{}, Query: append([]Param{{"product_id", "string", "only groups offered on this product"}}, pageParams...),
		Summary: "List modifier groups with their options", Handler: s.listModifierGroups})
	s.handle(&Route{Method: "POST", Path: "/catalog/modifiers/groups", Tag: "catalog", Scope: kassa.ScopeCatalogWrite, Status: 201,
		Body: kassa.ModifierGroupCreate{}, Resp: kassa.ModifierGroup{}, Summary: "Create a modifier group with options",
		Handler: createWith("/catalog/modifiers/groups", func(v *kassa.ModifierGroup) string { return v.ID }, svc.CreateModifierGroup)})
	s.handle(&Route{Method: "GET", Path: "/catalog/modifiers/groups/:id", Tag: "catalog", Scope: kassa.ScopeCatalogRead,
		Resp: kassa.ModifierGroup{}, Summary: "Retrieve a modifier group", Handler: getBy("modifier group", svc.FindModifierGroupByID)})
	s.handle(&Route{Method: "PATCH", Path: "/catalog/modifiers/groups/:id", Tag: "catalog", Scope: kassa.ScopeCatalogWrite,
		Body: kassa.ModifierGroupUpdate{}, Resp: kassa.ModifierGroup{},
		Summary: "Update a modifier group; options, when given, replace the list (keep an option's id to keep it)",
		Handler: updateWith("modifier group", svc.UpdateModifierGroup)})
}

func (s *Server) listModifierGroups(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	productID, err := queryID(c, "product_id")
	if err != nil {
		return err
	}
	l, err := s.svc.ModifierGroups.FindModifierGroups(c.UserContext(), productID, p)
	return list(c, l, err)
}
