// Package nodetest runs a node's main function in-process for tests, the
// way a shell would run the binary: with arguments, an environment, and
// stdout to read the listening address from.
package nodetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kassa.dev/sync/wait"
)

// MainFunc is the testable body of a main package.
type MainFunc func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// Proc is a running main.
type Proc struct {
	URL string
	// Client sends Call's requests; set it to one trusting the node's CA
	// when the node serves HTTPS. Nil: http.DefaultClient.
	Client *http.Client
	cancel context.CancelFunc
	done   chan error
	out    *SyncBuffer
}

// SyncBuffer is an output sink a test reads while a node writes to it
// (a main's stdout, a node's log).
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *SyncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

var servingRe = regexp.MustCompile(`serving (https?://[0-9.:]+)`)

// Start runs main with args and waits (up to 30 s) until it prints the URL
// it serves on. The process is stopped at the end of the test.
func Start(t testing.TB, main MainFunc, env map[string]string, args ...string) *Proc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proc{cancel: cancel, done: make(chan error, 1), out: &SyncBuffer{}}
	go func() { p.done <- main(ctx, args, func(k string) string { return env[k] }, p.out, testStderr()) }()
	deadline := time.Now().Add(30 * time.Second)
	for p.URL == "" {
		if m := servingRe.FindStringSubmatch(p.out.String()); m != nil {
			p.URL = m[1]
			break
		}
		select {
		case err := <-p.done:
			t.Fatalf("main exited before serving: %v\n%s", err, p.out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("main did not serve within 30s:\n%s", p.out.String())
		}
	}
	t.Cleanup(func() { p.Stop(t) })
	return p
}

// Output is what main printed so far.
func (p *Proc) Output() string { return p.out.String() }

// Stop cancels main's context (as SIGTERM does) and waits up to 20 s for
// it to return; it fails the test if main returned an error.
func (p *Proc) Stop(t testing.TB) {
	t.Helper()
	if p.cancel == nil {
		return
	}
	p.cancel()
	p.cancel = nil
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("main returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("main did not stop within 20s")
	}
}

// Call sends a JSON request and decodes a JSON answer into out (if not nil);
// it returns the status.
func (p *Proc) Call(t testing.TB, method, path, token string, body, out any) int {
	t.Helper()
	res, b, err := p.send(method, path, token, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil && !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
	}
	return res.StatusCode
}

// TryCall is Call for goroutines other than the test's: a failure to
// connect (the node was killed) returns 0 instead of failing the test.
func (p *Proc) TryCall(method, path, token string, body, out any) int {
	res, b, err := p.send(method, path, token, body)
	if err != nil {
		return 0
	}
	if out != nil {
		json.Unmarshal(b, out)
	}
	return res.StatusCode
}

// send sends body as JSON with the bearer token (if any) and reads the
// answer; only a request that got no answer is an error.
func (p *Proc) send(method, path, token string, body any) (*http.Response, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, p.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := p.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body) // the status stands even if the body is cut off
	return res, b, nil
}

// Login logs in and returns the access token, failing the test otherwise.
func (p *Proc) Login(t testing.TB, email, password string) string {
	t.Helper()
	var out struct {
		Data struct {
			AccessToken string `json:"accessToken"`
		} `json:"data"`
	}
	if st := p.Call(t, "POST", "/api/v1/auth/login", "", map[string]string{"email": email, "password": password}, &out); st != 200 {
		t.Fatalf("login %s: status %d", email, st)
	}
	return out.Data.AccessToken
}

// testStderr is where nodes under test log: nowhere, unless
// KASSA_TEST_LOG=1 asks for their logs on the test's stderr.
func testStderr() io.Writer {
	if os.Getenv("KASSA_TEST_LOG") == "1" {
		return os.Stderr
	}
	return io.Discard
}

// loginFrom numbers the client addresses of WaitLogin.
var loginFrom atomic.Uint32

// WaitLogin polls a login until it succeeds (the user reaches an edge by
// sync) and returns the access token, failing the test after d. Each try
// comes from another loopback address (127.2.0.0/16; Linux routes all of
// 127/8 to lo), since a node throttles logins per address and locks an
// account for an address after a few failures: a test polling from one
// address would lock itself out, as a terminal retrying 20 times a second
// would.
func (p *Proc) WaitLogin(t testing.TB, d time.Duration, email, password string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	var token string
	wait.For(t, d, "a login of "+email, func() bool {
		n := loginFrom.Add(1)
		dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 2, byte(n>>8), byte(n))}, Timeout: 5 * time.Second}
		tr := &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}
		if p.Client != nil {
			if base, ok := p.Client.Transport.(*http.Transport); ok {
				tr.TLSClientConfig = base.TLSClientConfig // a node serving HTTPS
			}
		}
		client := &http.Client{Transport: tr}
		res, err := client.Post(p.URL+"/api/v1/auth/login", "application/json", bytes.NewReader(body))
		if err != nil {
			return false
		}
		defer res.Body.Close()
		var out struct {
			Data struct {
				AccessToken string `json:"accessToken"`
			} `json:"data"`
		}
		json.NewDecoder(res.Body).Decode(&out)
		token = out.Data.AccessToken
		return res.StatusCode == http.StatusOK
	})
	return token
}
