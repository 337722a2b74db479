package hubapi

// The token endpoint's throttle (issue 21, N8): every call costs a query
// and a hash, and a partner's loop or an attacker's flood must not take
// the hub's writer. Two token buckets, both in memory:
//
//   - per client address (clientAddr: IPv6 cut to its /64), spent before
//     anything is read, bounded to tokenMaxAddrs buckets (new addresses
//     beyond share one);
//   - per client, spent only once the client authenticated (an answer
//     other than invalid_client): a client's budget cannot be spent by
//     someone who merely knows its client_id. A request is refused when
//     the client's bucket is empty, checked before the call.
//
// Every answer carries X-RateLimit-Limit and X-RateLimit-Remaining of the
// tighter bucket; a refusal is 429 with Retry-After and the RFC 6749 body
// {error: temporarily_unavailable}.

import (
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/ratelimit"
)

// tokenMaxAddrs bounds the address buckets held (ratelimit.SetMaxKeys).
const tokenMaxAddrs = 50_000

type tokenLimits struct {
	client, addr *ratelimit.Limiter
}

func newTokenLimits(r httpapi.TokenRate, now func() time.Time) *tokenLimits {
	if r.ClientPerMinute <= 0 {
		r.ClientPerMinute, r.ClientBurst = httpapi.DefaultTokenPerMinute, httpapi.DefaultTokenBurst
	}
	if r.AddrPerMinute <= 0 {
		r.AddrPerMinute, r.AddrBurst = httpapi.DefaultTokenPerMinute, httpapi.DefaultTokenBurst
	}
	t := &tokenLimits{client: ratelimit.New(r.ClientPerMinute, max(r.ClientBurst, 1), now),
		addr: ratelimit.New(r.AddrPerMinute, max(r.AddrBurst, 1), now)}
	t.addr.SetMaxKeys(tokenMaxAddrs)
	t.client.SetMaxKeys(tokenMaxAddrs) // only authenticated clients get one
	return t
}

// admitToken spends the address's token and checks the client's; it sets
// the headers and returns the refusal (an *kassa.OAuthError of 429) when
// either bucket is empty.
func (s *api) admitToken(c *fiber.Ctx, clientID string) error {
	r := s.token.addr.Take(s.ClientAddr(c))
	if r.Allowed && kassa.ValidID(clientID) {
		r = tighter(r, s.token.client.Peek(clientID))
	}
	setRateHeaders(c, r)
	if r.Allowed {
		return nil
	}
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(1, int(r.RetryAfter.Seconds()+0.999))))
	return &kassa.OAuthError{Code: kassa.OAuthTemporarilyUnavailable, Status: fiber.StatusTooManyRequests,
		Description: "too many token requests from this client or address; retry after Retry-After seconds"}
}

// spentToken charges an authenticated client's bucket after its call and
// sets the headers anew when its bucket is now the tighter.
func (s *api) spentToken(c *fiber.Ctx, clientID string, err error) {
	var oe *kassa.OAuthError
	if (errors.As(err, &oe) && oe.Code == kassa.OAuthInvalidClient) || !kassa.ValidID(clientID) {
		return
	}
	r := s.token.client.Spend(clientID, 1)
	if left, _ := strconv.Atoi(string(c.Response().Header.Peek("X-RateLimit-Remaining"))); r.Remaining < left {
		setRateHeaders(c, r)
	}
}

// tighter is the result with fewer tokens left (the refused one first).
func tighter(a, b ratelimit.Result) ratelimit.Result {
	if !b.Allowed || (a.Allowed && b.Remaining < a.Remaining) {
		return b
	}
	return a
}

func setRateHeaders(c *fiber.Ctx, r ratelimit.Result) {
	c.Set("X-RateLimit-Limit", strconv.Itoa(r.Limit))
	c.Set("X-RateLimit-Remaining", strconv.Itoa(max(r.Remaining, 0)))
}
