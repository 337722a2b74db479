package httpapi_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/wait"
)

// customerBody is a valid customer of exactly n bytes of JSON (n >= 64),
// padded with whitespace.
func customerBody(n int) string {
	head := `{"first_name":"Big","last_name":"Body"`
	return head + strings.Repeat(" ", n-len(head)-1) + `}`
}

// startBody sends the headers of a POST /customers of a body of
// len(body) bytes and its first part bytes, and leaves the rest unsent.
func startBody(t *testing.T, tn *testNode, token, body string, part int) net.Conn {
	t.Helper()
	u, _ := url.Parse(tn.URL)
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /api/v1/customers HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		u.Host, token, len(body), body[:part])
	return c
}

// TestLargeBodiesWaitForTheBodyBudget holds the whole body budget with two
// slow uploads: a third large body is refused with 429 and Retry-After
// after the wait and creates nothing, a small body still goes through, and
// once the uploads end the large body is served again. Before, every body
// was buffered whole by the server as it arrived, whatever their number
// (2,000 slow uploads held 2 GiB at a hub).
func TestLargeBodiesWaitForTheBodyBudget(t *testing.T) {
	defer func(w time.Duration) { httpapi.BodyWait = w }(httpapi.BodyWait)
	httpapi.BodyWait = 300 * time.Millisecond
	tn := MustStartNode(t, kassa.NodeHub, func(c *node.Config) { c.BodyBudget = 128 << 10 }) // two 64 KiB units
	o := tn.MustOrg("Body Budget")
	large := customerBody(60 << 10)
	var held []net.Conn
	for range 2 {
		held = append(held, startBody(t, tn, o.Owner, large, 16<<10))
	}
	count := func() int {
		return len(tn.Do("GET", "/api/v1/customers?limit=200", o.Owner, nil).JSON()["data"].([]any))
	}
	early := 0 // served before the uploads held the budget
	wait.For(t, 10*time.Second, "a large body refused while the budget is held", func() bool {
		r := tn.Do("POST", "/api/v1/customers", o.Owner, large)
		if r.Status == 201 {
			early++
		}
		if r.Status == 429 {
			mustProblem(t, r, 429, "rate-limited")
			if r.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
			return true
		}
		return false
	})
	if n := count(); n != early {
		t.Fatalf("%d customers after the refused body, want %d", n, early)
	}
	if r := tn.Do("POST", "/api/v1/customers", o.Owner, map[string]any{"first_name": "Small", "last_name": "Body"}); r.Status != 201 {
		t.Fatalf("a small body while the budget is held: %d %s", r.Status, r.Body)
	}
	for _, c := range held {
		io.WriteString(c, large[16<<10:])
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != 201 {
			t.Fatalf("a held upload once sent: %v %v", res, err)
		}
	}
	if r := tn.Do("POST", "/api/v1/customers", o.Owner, large); r.Status != 201 {
		t.Fatalf("a large body once the budget is free: %d %s", r.Status, r.Body)
	}
	if n := count(); n != 4+early {
		t.Fatalf("%d customers, want %d (two held uploads, the small one, the last)", n, 4+early)
	}
}

// TestEncodedBodyIsRefused sends a gzip body: 400 naming Content-Encoding,
// and it is never inflated (Fiber would inflate it without a limit: 300
// KiB of gzip took a hub to 1.2 GiB).
func TestEncodedBodyIsRefused(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	fmt.Fprintf(z, `{"email":"nobody@body.test","password":"%s"}`, strings.Repeat("p", 4<<20))
	z.Close()
	r := tn.Do("POST", "/api/v1/auth/login", "", b.String(), "Content-Encoding", "gzip")
	p := mustProblem(t, r, 400, "bad-request")
	if !strings.Contains(p["detail"].(string), "Content-Encoding") {
		t.Fatalf("detail %q does not name Content-Encoding", p["detail"])
	}
}

// TestConnectionsBeyondTheCapAreRefused opens MaxConns idle connections:
// one more is answered 503 and closed, and once one closes a new
// connection is served.
func TestConnectionsBeyondTheCapAreRefused(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, func(c *node.Config) { c.MaxConns = 4 })
	u, _ := url.Parse(tn.URL)
	var open []net.Conn
	for range 4 {
		c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		open = append(open, c)
	}
	get := func() int {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
		res, err := c.Get(tn.URL + "/healthz")
		if err != nil {
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}
	wait.For(t, 10*time.Second, "a connection over the cap refused", func() bool { return get() == 503 })
	open[0].Close()
	wait.For(t, 10*time.Second, "a connection served once one closed", func() bool { return get() == 200 })
}

// TestARefusedBodyIsNotReadAsTheNextRequest refuses a request before its
// body is read (a query that is not UTF-8) and checks that the connection
// ends with that answer: the unread rest of the body, here a second
// request, is never parsed as one.
func TestARefusedBodyIsNotReadAsTheNextRequest(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	u, _ := url.Parse(tn.URL)
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	smuggled := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
	body := strings.Repeat(" ", 12<<10) + smuggled
	go fmt.Fprintf(c, "POST /api/v1/customers?x=%%ff HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", u.Host, len(body), body)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	if res.StatusCode != 400 {
		t.Fatalf("status %d, want 400", res.StatusCode)
	}
	if next, err := http.ReadResponse(br, nil); err == nil {
		t.Fatalf("a second answer on the connection: %d (the body's rest was read as a request)", next.StatusCode)
	}
}
