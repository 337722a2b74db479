package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesSettings() {
	svc := s.svc.Settings
	s.handle(&Route{Method: "GET", Path: "/settings", Tag: "settings", Resp: kassa.OrgSettings{},
		Summary: "The org's commercial settings: tax rate and mode, cashier refund limit per order, per-role discount limits, " +
			"negative stock, offline card limits",
		Handler: func(c *fiber.Ctx) error {
			st, err := svc.Settings(c.UserContext())
			if err != nil {
				return err
			}
			return one(c, fiber.StatusOK, st)
		}})
	s.handle(&Route{Method: "PATCH", Path: "/settings", Tag: "settings", Body: kassa.SettingsUpdate{}, Resp: kassa.OrgSettings{},
		Summary: "Change settings (owners only)", Handler: func(c *fiber.Ctx) error {
			var in kassa.SettingsUpdate
			if err := decode(c, &in); err != nil {
				return err
			}
			st, err := svc.UpdateSettings(c.UserContext(), &in)
			if err != nil {
				return err
			}
			return one(c, fiber.StatusOK, st)
		}})
}
