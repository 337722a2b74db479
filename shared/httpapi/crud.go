package httpapi

import (
	"bytes"
	"context"

	"github.com/gofiber/fiber/v2"
)

// The generic handlers below are the thin shape every resource shares:
// parse the id and body, call one service method, encode the envelope.

// getBy returns a handler for GET .../:id.
func getBy[T any](resource string, find func(context.Context, string) (*T, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := pathID(c, resource)
		if err != nil {
			return err
		}
		v, err := find(c.UserContext(), id)
		if err != nil {
			return err
		}
		return one(c, fiber.StatusOK, v)
	}
}

// createWith returns a handler for POST of a collection: 201 with Location
// at prefix + "/" + the new id.
func createWith[In, T any](prefix string, id func(*T) string, create func(context.Context, *In) (*T, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var in In
		if err := decode(c, &in); err != nil {
			return err
		}
		v, err := create(c.UserContext(), &in)
		if err != nil {
			return err
		}
		return created(c, prefix+"/"+id(v), v)
	}
}

// updateWith returns a handler for PATCH .../:id.
func updateWith[In, T any](resource string, update func(context.Context, string, *In) (*T, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := pathID(c, resource)
		if err != nil {
			return err
		}
		var in In
		if err := decode(c, &in); err != nil {
			return err
		}
		v, err := update(c.UserContext(), id, &in)
		if err != nil {
			return err
		}
		return one(c, fiber.StatusOK, v)
	}
}

// deleteWith returns a handler for DELETE .../:id answering 204.
func deleteWith(resource string, del func(context.Context, string) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := pathID(c, resource)
		if err != nil {
			return err
		}
		if err := del(c.UserContext(), id); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// actionBy returns the handler of POST /<resource>s/:id/<action>. The
// action has no parameters: the body may be absent or an empty JSON
// object; anything else is refused like any strict body.
func actionBy[T any](resource string, act func(context.Context, string) (*T, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := pathID(c, resource)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(c.Body())) > 0 {
			var none struct{}
			if err := decode(c, &none); err != nil {
				return err
			}
		}
		v, err := act(c.UserContext(), id)
		if err != nil {
			return err
		}
		return one(c, fiber.StatusOK, v)
	}
}
