package kassa

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestWebhookSignatureMatchesGitHubsPublishedExample(t *testing.T) {
	// docs.github.com, "Validating webhook deliveries": the test values.
	got := WebhookSignature("It's a Secret to Everybody", []byte("Hello, World!"))
	if want := "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestWebhookStdSignatureMatchesTheSpecExample(t *testing.T) {
	// standard-webhooks spec example (its README and test suite).
	at := time.Unix(1614265330, 0)
	got := WebhookStdSignature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", at, []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestWebhookBodyIsExactlyEventAndData(t *testing.T) {
	b := WebhookBody(EventOrderCreated, json.RawMessage(`{"id":"x","total":450}`))
	if string(b) != `{"event":"order.created","data":{"id":"x","total":450}}` {
		t.Fatalf("body %s", b)
	}
}

func TestWebhookRetrySchedule(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		attempt int
		next    time.Duration
		ok      bool
	}{{1, time.Minute, true}, {2, 5 * time.Minute, true}, {3, 0, false}, {4, 0, false}} {
		next, ok := WebhookNextAttempt(DefaultWebhookRetryDelays, c.attempt, at)
		if ok != c.ok || (ok && next != at.Add(c.next)) {
			t.Errorf("after attempt %d: %v %v, want +%v %v", c.attempt, next, ok, c.next, c.ok)
		}
	}
	if d, err := ParseWebhookRetryDelays("1m, 5m"); err != nil || len(d) != 2 || d[1] != 5*time.Minute {
		t.Errorf("parse 1m, 5m: %v %v", d, err)
	}
	for _, bad := range []string{"1m,-5m", "soon", "0s"} {
		if _, err := ParseWebhookRetryDelays(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestWebhookRegistrationRules(t *testing.T) {
	ok := WebhookCreate{URL: "https://hooks.example.com/kassa?x=1", Events: []string{EventOrderCreated, EventPaymentCaptured}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, in := range []WebhookCreate{
		{URL: "http://", Events: []string{EventOrderCreated}},
		{URL: "javascript:alert(1)", Events: []string{EventOrderCreated}},
		{URL: "https://example.com/#frag", Events: []string{EventOrderCreated}},
		{URL: "https://example.com/" + strings.Repeat("a", MaxWebhookURL), Events: []string{EventOrderCreated}},
		{URL: "https://example.com/", Events: []string{EventTestPing}},
		{URL: "https://example.com/", Events: []string{EventOrderCreated, EventOrderCreated}},
		{URL: "https://example.com/", Events: make([]string, MaxWebhookEvents+1)},
	} {
		if err := in.Validate(); err == nil {
			t.Errorf("%+v accepted", in)
		}
	}
	if !WebhookSubscribes([]string{WebhookAllEvents}, EventOrderRefunded) || WebhookSubscribes([]string{EventOrderCreated}, EventOrderRefunded) {
		t.Error("subscription rule")
	}
	if err := (&WebhookUpdate{}).Validate(); err == nil {
		t.Error("empty update accepted")
	}
}
