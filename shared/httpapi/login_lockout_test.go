package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// clientFrom returns an HTTP client whose connections come from the given
// loopback address (Linux routes all of 127/8 to lo), so that a test can
// log in from two client addresses.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// loginFrom posts a login from the client address ip, with headers (name,
// value, …).
func (tn *testNode) loginFrom(ip, email, pw string, headers ...string) *resp {
	tn.t.Helper()
	b, _ := json.Marshal(map[string]any{"email": email, "password": pw})
	req, err := http.NewRequest("POST", tn.URL+"/api/v1/auth/login", bytes.NewReader(b))
	if err != nil {
		tn.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	res, err := clientFrom(ip).Do(req)
	if err != nil {
		tn.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return &resp{Status: res.StatusCode, Header: res.Header, Body: body}
}

// mustRetryAfter checks a 429 rate-limited problem and returns its Retry-After seconds.
func mustRetryAfter(t *testing.T, r *resp) int {
	t.Helper()
	mustProblem(t, r, 429, "rate-limited")
	s, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || s < 1 {
		t.Fatalf("429 with Retry-After %q", r.Header.Get("Retry-After"))
	}
	return s
}

func TestLockoutIsPerAccountAndAddressWithGrowingDelays(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Lockout Cafe")
	const attacker, till = "127.0.0.7", "127.0.0.8"

	// Five wrong passwords from one address: each a plain 401 until the
	// fifth, which locks the account for that address.
	for i := range kassa.LockoutFreeFailures - 1 {
		mustProblem(t, tn.loginFrom(attacker, o.OwnerEmail, "guess"+strconv.Itoa(i)), 401, "unauthorized")
	}
	if s := mustRetryAfter(t, tn.loginFrom(attacker, o.OwnerEmail, "guess-5")); s != 15 {
		t.Fatalf("first lock %d s, want 15", s)
	}
	// Locked: even the right password from that address is refused, and
	// the wait is not extended by asking.
	if s := mustRetryAfter(t, tn.loginFrom(attacker, o.OwnerEmail, testPassword)); s != 15 {
		t.Fatalf("Retry-After while locked %d s, want 15", s)
	}
	// The owner at the till, another address, logs in throughout.
	if r := tn.loginFrom(till, o.OwnerEmail, testPassword); r.Status != 200 {
		t.Fatalf("login from another address while locked: %d %s", r.Status, r.Body)
	}

	// Each further failure after the lock doubles it.
	tn.Clock.Advance(16 * time.Second)
	if s := mustRetryAfter(t, tn.loginFrom(attacker, o.OwnerEmail, "guess-6")); s != 30 {
		t.Fatalf("second lock %d s, want 30", s)
	}
	tn.Clock.Advance(31 * time.Second)
	if s := mustRetryAfter(t, tn.loginFrom(attacker, o.OwnerEmail, "guess-7")); s != 60 {
		t.Fatalf("third lock %d s, want 60", s)
	}

	// After the lock, the right password from that address succeeds and
	// resets the count: four more failures are plain 401s again.
	tn.Clock.Advance(61 * time.Second)
	if r := tn.loginFrom(attacker, o.OwnerEmail, testPassword); r.Status != 200 {
		t.Fatalf("login after the lock: %d %s", r.Status, r.Body)
	}
	for range kassa.LockoutFreeFailures - 1 {
		mustProblem(t, tn.loginFrom(attacker, o.OwnerEmail, "again"), 401, "unauthorized")
	}

	// An unknown e-mail locks the same way, so a lock tells nothing about
	// which addresses have accounts.
	for range kassa.LockoutFreeFailures - 1 {
		mustProblem(t, tn.loginFrom(attacker, "nobody@lockout.test", "guess"), 401, "unauthorized")
	}
	if s := mustRetryAfter(t, tn.loginFrom(attacker, "nobody@lockout.test", "guess")); s != 15 {
		t.Fatalf("unknown e-mail lock %d s, want 15", s)
	}
}

func TestLoginThrottlePerAddress(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, func(c *node.Config) { c.LoginIPPerMinute, c.LoginIPBurst = 2, 3 })
	org, _, err := tn.N.Orgs.CreateOrg(t.Context(), &kassa.OrgCreate{Name: "Throttle Cafe", Currency: "AUD",
		OwnerEmail: "owner@throttle.test", OwnerName: "Owner", OwnerPassword: testPassword})
	if err != nil || org == nil {
		t.Fatal(err)
	}
	const busy, other = "127.0.0.9", "127.0.0.10"
	// Three attempts at once from one address, whatever the e-mail.
	for _, email := range []string{"a@throttle.test", "b@throttle.test", "owner@throttle.test"} {
		if r := tn.loginFrom(busy, email, "x"); r.Status != 401 {
			t.Fatalf("attempt within the burst: %d %s", r.Status, r.Body)
		}
	}
	s := mustRetryAfter(t, tn.loginFrom(busy, "owner@throttle.test", testPassword))
	if s != 30 {
		t.Fatalf("Retry-After %d s, want 30 (2 a minute)", s)
	}
	// Another address is not throttled by it.
	if r := tn.loginFrom(other, "owner@throttle.test", testPassword); r.Status != 200 {
		t.Fatalf("login from another address: %d %s", r.Status, r.Body)
	}
	// After Retry-After, the address may try again.
	tn.Clock.Advance(time.Duration(s) * time.Second)
	if r := tn.loginFrom(busy, "owner@throttle.test", testPassword); r.Status != 200 {
		t.Fatalf("login after Retry-After: %d %s", r.Status, r.Body)
	}
}

func TestLoginThrottleForTheWholeNode(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, func(c *node.Config) { c.LoginPerMinute, c.LoginBurst = 6, 2 })
	for i, ip := range []string{"127.0.0.11", "127.0.0.12"} {
		if r := tn.loginFrom(ip, "x@global.test", "x"); r.Status != 401 {
			t.Fatalf("attempt %d: %d %s", i, r.Status, r.Body)
		}
	}
	if s := mustRetryAfter(t, tn.loginFrom("127.0.0.13", "x@global.test", "x")); s != 10 {
		t.Fatalf("Retry-After %d s, want 10 (6 a minute)", s)
	}
}
