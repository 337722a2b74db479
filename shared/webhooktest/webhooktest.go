// Package webhooktest is a webhook receiver for tests: a real HTTP server
// on 127.0.0.1 that checks every POST with two independent verifiers —
// go-github's ValidateSignature for X-Kassa-Signature and the Standard
// Webhooks library for webhook-id/-timestamp/-signature — and keeps the
// verified ones, so tests count deliveries by delivery id.
package webhooktest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v84/github"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"kassa.dev/sync/wait"
)

// Received is one verified POST.
type Received struct {
	Delivery, Event string
	Body            map[string]any
	Raw             []byte
}

// Receiver is a webhook endpoint. It answers a verified POST with its
// status (200 at first) and "thanks", a POST that fails verification with
// 401; while Hang is set it holds every POST until the channel is closed or
// the sender gives up.
type Receiver struct {
	t   testing.TB
	srv *httptest.Server

	mu      sync.Mutex
	secret  string
	status  int
	hang    chan struct{}
	got     []Received
	refused int
	// ignoreTime verifies webhook-signature without the library's 5-minute
	// window (for a sender on a fake clock).
	ignoreTime bool
}

// New starts a receiver, closed at the end of the test.
func New(t testing.TB) *Receiver {
	r := &Receiver{t: t, status: 200}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.mu.Lock()
		if r.hang != nil {
			close(r.hang)
			r.hang = nil
		}
		r.mu.Unlock()
		r.srv.Close()
	})
	return r
}

// URL is the receiver's endpoint URL.
func (r *Receiver) URL() string { return r.srv.URL + "/hook" }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	secret, status, hang, ignore := r.secret, r.status, r.hang, r.ignoreTime
	r.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-req.Context().Done():
			return
		}
	}
	err := Verify(secret, body, req.Header, ignore)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.refused++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var m map[string]any
	json.Unmarshal(body, &m)
	r.got = append(r.got, Received{Delivery: req.Header.Get("X-Kassa-Delivery"), Event: req.Header.Get("X-Kassa-Event"), Body: m, Raw: body})
	w.WriteHeader(status)
	io.WriteString(w, "thanks")
}

// Verify checks a delivery as a receiver would: X-Kassa-Signature with
// go-github, webhook-signature with the Standard Webhooks library (its
// timestamp window unless ignoreTime), and webhook-id = X-Kassa-Delivery.
func Verify(secret string, body []byte, h http.Header, ignoreTime bool) error {
	if err := github.ValidateSignature(h.Get("X-Kassa-Signature"), body, []byte(secret)); err != nil {
		return err
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	if ignoreTime {
		err = wh.VerifyIgnoringTimestamp(body, h)
	} else {
		err = wh.Verify(body, h)
	}
	if err == nil && h.Get("webhook-id") != h.Get("X-Kassa-Delivery") {
		err = errors.New("webhook-id differs from X-Kassa-Delivery")
	}
	return err
}

// SetSecret sets the secret the receiver verifies with.
func (r *Receiver) SetSecret(s string) { r.mu.Lock(); r.secret = s; r.mu.Unlock() }

// Secret is the secret the receiver verifies with.
func (r *Receiver) Secret() string { r.mu.Lock(); defer r.mu.Unlock(); return r.secret }

// SetStatus sets the status of the answer to a verified POST.
func (r *Receiver) SetStatus(code int) { r.mu.Lock(); r.status = code; r.mu.Unlock() }

// IgnoreTime stops checking webhook-timestamp against the real clock.
func (r *Receiver) IgnoreTime() { r.mu.Lock(); r.ignoreTime = true; r.mu.Unlock() }

// Hang holds every POST until release is closed (or the sender gives up).
func (r *Receiver) Hang(release chan struct{}) { r.mu.Lock(); r.hang = release; r.mu.Unlock() }

// Refused counts POSTs that failed verification.
func (r *Receiver) Refused() int { r.mu.Lock(); defer r.mu.Unlock(); return r.refused }

// All returns the verified POSTs so far.
func (r *Receiver) All() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.got...)
}

// Of returns the verified POSTs of one event type.
func (r *Receiver) Of(event string) []Received {
	var out []Received
	for _, g := range r.All() {
		if g.Event == event {
			out = append(out, g)
		}
	}
	return out
}

// WaitFor waits (up to d) until the receiver holds n verified POSTs of
// event, and returns them.
func (r *Receiver) WaitFor(d time.Duration, event string, n int) []Received {
	r.t.Helper()
	wait.For(r.t, d, fmt.Sprintf("%d verified %s POSTs", n, event), func() bool { return len(r.Of(event)) >= n })
	return r.Of(event)
}
