package httpapi

import (
	"context"
	"io"
	"time"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Request bodies are streamed (fiber.Config.StreamRequestBody) and read
// here, so that what they cost in memory is bounded by the node, not by
// its clients (docs/trust.md, "Memory"):
//
//   - Without streaming, fasthttp allocates a body's declared
//     Content-Length (rounded up to a power of two) as soon as the headers
//     arrive, so slow uploads hold what they announce (gigabytes at the
//     hub: docs/performance.md).
//   - A body larger than the prefetch (bodyPrefetch) is read only once it
//     holds its share of the node's body budget (Config.BodyBudget): at most that
//     many bytes of large bodies are read or being handled at once. Bodies
//     up to the prefetch, almost every request of a till, pass freely; they
//     cost what the connection's read buffer already holds.
//   - A body with a Content-Encoding is refused: Fiber would inflate it
//     without a limit (a gzip bomb).

// bodyPrefetch is what fasthttp reads of a streamed body with the headers
// (readBodyWithStreaming): a body this size or smaller is in memory anyway.
const bodyPrefetch = 8 << 10

// bodyUnit is the granule of the body budget.
const bodyUnit = 64 << 10

// DefaultBodyBudget is the body budget when Config.BodyBudget is 0: 4 MiB,
// and at least two bodies of the body limit. A JSON body costs about
// three times its size while it is decoded (the body, json.Decoder's copy,
// the values), so this is about 12 MiB of heap at most.
const DefaultBodyBudget = 4 << 20

// BodyWait is how long a large body waits for its share of the budget
// before the request is refused with 429 and Retry-After.
var BodyWait = 5 * time.Second

// budget is a weighted semaphore of units: one acquirer at a time takes
// its units, so two large bodies never each hold half of what both need.
type budget struct {
	turn  chan struct{}
	units chan struct{}
}

func newBudget(units int) *budget {
	return &budget{turn: make(chan struct{}, 1), units: make(chan struct{}, max(units, 1))}
}

// acquire takes n units (at most all of them), waiting until ctx ends.
func (b *budget) acquire(ctx context.Context, n int) bool {
	n = min(n, cap(b.units))
	select {
	case b.turn <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	defer func() { <-b.turn }()
	for i := range n {
		select {
		case b.units <- struct{}{}:
		case <-ctx.Done():
			b.release(i)
			return false
		}
	}
	return true
}

func (b *budget) release(n int) {
	for range min(n, cap(b.units)) {
		<-b.units
	}
}

// held reports the units taken, for tests and metrics.
func (b *budget) held() int { return len(b.units) }

// readBody reads the request's streamed body within the limits above and
// puts it in place, so that handlers' c.Body() sees it whole; the large
// body's share of the budget is held until the handler has answered.
func (s *Server) readBody(c *fiber.Ctx) error {
	req := c.Request()
	if !req.IsBodyStream() {
		return c.Next()
	}
	if len(req.Header.Peek(fiber.HeaderContentEncoding)) > 0 {
		c.Context().SetConnectionClose() // the body is left unread
		return kassa.Errorf(kassa.EBadRequest, "a Content-Encoding of the request body is not accepted: send it uncompressed")
	}
	n := req.Header.ContentLength() // -1: chunked
	if n > s.cfg.BodyLimit {
		c.Context().SetConnectionClose()
		return fiber.ErrRequestEntityTooLarge
	}
	if n < 0 || n > bodyPrefetch {
		units := (s.cfg.BodyLimit + bodyUnit - 1) / bodyUnit
		if n >= 0 {
			units = (n + bodyUnit - 1) / bodyUnit
		}
		ctx, cancel := context.WithTimeout(c.UserContext(), BodyWait)
		ok := s.bodies.acquire(ctx, units)
		cancel()
		if !ok {
			c.Context().SetConnectionClose()
			return &kassa.Error{Kind: kassa.ERateLimited, RetryAfter: 1,
				Message: "the node is reading as many large request bodies as it may at once; retry later"}
		}
		defer s.bodies.release(units)
	}
	body, err := readAtMost(req.BodyStream(), n, s.cfg.BodyLimit)
	req.CloseBodyStream()
	switch {
	case err != nil:
		c.Context().SetConnectionClose()
		return kassa.Errorf(kassa.EBadRequest, "the request body could not be read")
	case len(body) > s.cfg.BodyLimit:
		c.Context().SetConnectionClose()
		return fiber.ErrRequestEntityTooLarge
	}
	req.SetBodyRaw(body)
	return c.Next()
}

// readAtMost reads a body of n bytes (-1: unknown), or up to limit+1 bytes
// when n is unknown, allocating once when n is known.
func readAtMost(r io.Reader, n, limit int) ([]byte, error) {
	if n >= 0 {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	return io.ReadAll(io.LimitReader(r, int64(limit)+1))
}

// closeUnread closes the connection after a request whose streamed body
// was left unread (refused before readBody, or a panic): fasthttp would
// otherwise read the rest of the body as the connection's next request.
func closeUnread(c *fiber.Ctx) error {
	defer func() {
		if c.Request().IsBodyStream() {
			c.Context().SetConnectionClose()
		}
	}()
	return c.Next()
}
