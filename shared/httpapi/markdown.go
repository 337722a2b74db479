package httpapi

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Markdowns (docs/catalog.md): scheduled price reductions, made at the hub
// (an enrolled edge answers a write with 409, like campaigns) and priced
// at every store, offline too. Reading is catalog:read, writing
// catalog:write.
func (s *Server) routesMarkdowns() {
	svc := s.svc.Markdowns
	s.handle(&Route{Method: "GET", Path: "/catalog/markdowns", Tag: "catalog", Scope: kassa.ScopeCatalogRead, List: true,
		Resp: kassa.Markdown{}, Query: append([]Param{{"active_at", "string", "only markdowns applying at this instant (RFC 3339)"}}, pageParams...),
		Summary: "List markdowns", Handler: s.listMarkdowns})
	s.handle(&Route{Method: "POST", Path: "/catalog/markdowns", Tag: "catalog", Scope: kassa.ScopeCatalogWrite, Status: 201,
		Body: kassa.MarkdownCreate{}, Resp: kassa.Markdown{},
		Summary: "Schedule a markdown (percent off, or a new price) on products or categories; a new price not below a price it would apply to is 422 on value",
		Handler: createWith("/catalog/markdowns", func(m *kassa.Markdown) string { return m.ID }, svc.CreateMarkdown)})
	s.handle(&Route{Method: "GET", Path: "/catalog/markdowns/:id", Tag: "catalog", Scope: kassa.ScopeCatalogRead, Resp: kassa.Markdown{},
		Summary: "Retrieve a markdown", Handler: getBy("markdown", svc.FindMarkdownByID)})
	s.handle(&Route{Method: "PATCH", Path: "/catalog/markdowns/:id", Tag: "catalog", Scope: kassa.ScopeCatalogWrite,
		Body: kassa.MarkdownUpdate{}, Resp: kassa.Markdown{},
		Summary: "Update a markdown (is_active false withdraws it; type cannot change: 422)", Handler: updateWith("markdown", svc.UpdateMarkdown)})
}

func (s *Server) listMarkdowns(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.MarkdownFilter{Page: p}
	if v := c.Query("active_at"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return kassa.Errorf(kassa.EBadRequest, "active_at must be an RFC 3339 time")
		}
		f.ActiveAt = &t
	}
	l, err := s.svc.Markdowns.FindMarkdowns(c.UserContext(), f)
	return list(c, l, err)
}
