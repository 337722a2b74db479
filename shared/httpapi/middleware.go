package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"kassa.dev/shared/kassa"
)

const localRequestID = "request_id"

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}

// validRequestID accepts client ids of up to 128 visible ASCII characters.
func validRequestID(s string) bool { return validKey(s, 128) }

// validKey accepts 1 to max visible ASCII characters.
func validKey(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// requestIDs echoes a sane X-Request-Id or mints one, and sets it on the response.
func (s *Server) requestIDs(c *fiber.Ctx) error {
	id := c.Get(fiber.HeaderXRequestID)
	if !validRequestID(id) {
		id = uuid.NewString()
	}
	c.Locals(localRequestID, id)
	c.Set(fiber.HeaderXRequestID, id)
	return c.Next()
}

// recoverer turns a panic into a 500 problem and logs the stack.
func (s *Server) recoverer(c *fiber.Ctx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic", slog.String("request_id", requestID(c)), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return c.Next()
}

// accessLog logs one line per request and records metrics. It logs the path
// without the query string, which may carry an access token (KDS stream).
func (s *Server) accessLog(c *fiber.Ctx) error {
	start := time.Now()
	err := c.Next()
	if err != nil {
		if herr := s.app.ErrorHandler(c, err); herr != nil {
			c.Status(fiber.StatusInternalServerError)
		}
	}
	d := time.Since(start)
	status := c.Response().StatusCode()
	route := c.Route().Path
	s.metrics.observe(c.Method(), route, status, d)
	s.log.Info("http", slog.String("request_id", requestID(c)), slog.String("method", c.Method()),
		slog.String("path", c.Path()), slog.Int("status", status), slog.Duration("duration", d),
		slog.String("ip", c.IP()))
	return nil
}

// authenticate reads the bearer token, puts the actor in the request
// context and checks the route's scope.
func (s *Server) authenticate(scope kassa.Scope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		raw, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
		if !ok || raw == "" {
			return kassa.Errorf(kassa.EUnauthorized, "a bearer token is required")
		}
		a, err := s.svc.Auth.Authenticate(c.UserContext(), strings.TrimSpace(raw))
		if err != nil {
			return err
		}
		c.SetUserContext(kassa.WithActor(c.UserContext(), a))
		if s.orgLimit != nil {
			r := s.orgLimit.Take(a.OrgID)
			c.Set("X-RateLimit-Limit", strconv.Itoa(r.Limit))
			c.Set("X-RateLimit-Remaining", strconv.Itoa(r.Remaining))
			if !r.Allowed {
				return &kassa.Error{Kind: kassa.ERateLimited, Message: "the org's request rate limit is exhausted",
					RetryAfter: int(r.RetryAfter.Seconds() + 0.999)}
			}
		}
		if scope != "" && !a.Has(scope) {
			return kassa.Errorf(kassa.EForbidden, "this token lacks the %s scope", scope)
		}
		return c.Next()
	}
}

// idempotent implements Idempotency-Key on POST (CONTRACT.md): the same key
// and body within 24 h replays the first response; another body is 422;
// a first request still running is 409. Responses of 5xx are not kept, so
// a retry after a server error runs again.
func (s *Server) idempotent(c *fiber.Ctx) error {
	key := c.Get("Idempotency-Key")
	if key == "" || c.Method() != fiber.MethodPost || s.svc.Idempotency == nil {
		return c.Next()
	}
	if !validKey(key, 255) {
		return kassa.Errorf(kassa.EBadRequest, "Idempotency-Key must be 1-255 visible ASCII characters")
	}
	ctx := c.UserContext()
	a := kassa.ActorFrom(ctx)
	scope := a.OrgID + "/" + a.UserID + a.ClientID
	sum := sha256.New()
	fmt.Fprintf(sum, "%s %s\n", c.Method(), c.Path())
	sum.Write(c.Body())
	fp := hex.EncodeToString(sum.Sum(nil))
	replay, err := s.svc.Idempotency.Begin(ctx, scope, key, fp)
	if err != nil {
		return err
	}
	if replay != nil {
		c.Set("Idempotent-Replayed", "true")
		if replay.Location != "" {
			c.Set(fiber.HeaderLocation, replay.Location)
		}
		c.Set(fiber.HeaderContentType, replay.ContentType)
		return c.Status(replay.Status).Send(replay.Body)
	}
	// A service that passes the request on (the hub routing a store's
	// money operations) forwards the key; Fiber reuses the header's buffer.
	c.SetUserContext(kassa.WithIdempotencyKey(ctx, strings.Clone(key)))
	defer func() {
		if r := recover(); r != nil {
			// A panic is a server error: release the key so a retry runs.
			s.svc.Idempotency.Abandon(context.WithoutCancel(ctx), scope, key)
			panic(r)
		}
	}()
	if err := c.Next(); err != nil {
		if herr := s.app.ErrorHandler(c, err); herr != nil {
			return herr
		}
	}
	res := c.Response()
	if res.StatusCode() >= 500 {
		return s.svc.Idempotency.Abandon(ctx, scope, key)
	}
	return s.svc.Idempotency.Complete(ctx, scope, key, &kassa.IdempotentResponse{
		Status: res.StatusCode(), ContentType: string(res.Header.ContentType()),
		Location: string(res.Header.Peek(fiber.HeaderLocation)), Body: append([]byte(nil), res.Body()...),
	})
}
