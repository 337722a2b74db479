package httpapi

import (
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"kassa.dev/shared/kassa"
)

// problemOf is the one table from error kind to HTTP status and title.
var problemOf = map[kassa.Kind]struct {
	status int
	title  string
}{
	kassa.EBadRequest:   {400, "Bad Request"},
	kassa.EUnauthorized: {401, "Unauthorized"},
	kassa.EForbidden:    {403, "Forbidden"},
	kassa.ENotFound:     {404, "Not Found"},
	kassa.EConflict:     {409, "Conflict"},
	kassa.ETooLarge:     {413, "Payload Too Large"},
	kassa.EInvalid:      {422, "Unprocessable Entity"},
	kassa.ERateLimited:  {429, "Too Many Requests"},
	kassa.EInternal:     {500, "Internal Server Error"},

	kassa.EMethodNotAllowed: {405, "Method Not Allowed"},
	kassa.EUnavailable:      {503, "Service Unavailable"},
}

// invalidFieldsDetail is the detail of a validation problem whose error
// carries only its fields.
const invalidFieldsDetail = "the request body has invalid fields"

// Problem is an RFC 9457 problem document.
type Problem struct {
	Type      string             `json:"type"`
	Title     string             `json:"title"`
	Status    int                `json:"status"`
	Detail    string             `json:"detail"`
	Instance  string             `json:"instance"`
	RequestID string             `json:"request_id"`
	Errors    []kassa.FieldError `json:"errors,omitempty"`
}

// fiberKinds maps the errors Fiber itself raises to kinds.
var fiberKinds = map[int]kassa.Kind{
	fiber.StatusBadRequest:            kassa.EBadRequest,
	fiber.StatusNotFound:              kassa.ENotFound,
	fiber.StatusMethodNotAllowed:      kassa.EMethodNotAllowed,
	fiber.StatusRequestEntityTooLarge: kassa.ETooLarge,
	fiber.StatusUnauthorized:          kassa.EUnauthorized,
	fiber.StatusTooManyRequests:       kassa.ERateLimited,
}

// errorHandler renders every error as a problem document. Only internal
// errors are logged; their text never reaches the client.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	var ke *kassa.Error
	var fe *fiber.Error
	switch {
	case errors.As(err, &ke):
	case errors.As(err, &fe):
		kind, ok := fiberKinds[fe.Code]
		if !ok {
			kind = kassa.EBadRequest
		}
		msg := fe.Message
		switch fe.Code {
		case fiber.StatusNotFound:
			msg = "no such route: " + c.Method() + " " + c.Path()
		case fiber.StatusMethodNotAllowed:
			// Fiber's router has set Allow to the path's methods.
			msg = c.Method() + " is not allowed on " + c.Path() + "; allowed: " + c.GetRespHeader(fiber.HeaderAllow)
		}
		if fe.Code == fiber.StatusRequestEntityTooLarge {
			msg = "the request body exceeds " + strconv.Itoa(s.cfg.BodyLimit) + " bytes"
		}
		ke = &kassa.Error{Kind: kind, Message: msg}
	default:
		s.log.Error("internal error", slog.String("request_id", requestID(c)), slog.String("method", methodLabel(c.Method())),
			slog.String("path", strings.Clone(c.Path())), slog.Any("err", err))
		ke = &kassa.Error{Kind: kassa.EInternal, Message: "an unexpected error occurred; quote the request id to support"}
	}
	return s.writeProblem(c, ke)
}

func (s *Server) writeProblem(c *fiber.Ctx, ke *kassa.Error) error {
	if requestID(c) == "" {
		// Fiber rejects some requests (an oversize body) before any
		// middleware ran: they get an id here.
		id := uuid.NewString()
		c.Locals(localRequestID, id)
		c.Set(fiber.HeaderXRequestID, id)
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		c.Set(fiber.HeaderContentSecurityPolicy, cspAPI)
	}
	p, ok := problemOf[ke.Kind]
	if !ok {
		p = problemOf[kassa.EInternal]
	}
	switch ke.Kind {
	case kassa.EUnauthorized:
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="kassa"`)
	case kassa.ERateLimited, kassa.EUnavailable:
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(1, ke.RetryAfter)))
	}
	detail := ke.Message
	if detail == "" && ke.Kind == kassa.EInvalid {
		// The domain names the fields (kassa.InvalidField); the wording is ours.
		detail = invalidFieldsDetail
	}
	body := Problem{
		Type: s.cfg.ErrorsBase + "/" + string(ke.Kind), Title: p.title, Status: p.status,
		Detail: detail, Instance: c.Path(), RequestID: requestID(c), Errors: ke.Fields,
	}
	c.Status(p.status)
	if graphQL, _ := c.Locals(localGraphQL).(bool); graphQL {
		return s.writeGraphQLProblem(c, ke)
	}
	if err := c.JSON(body); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/problem+json")
	return nil
}
