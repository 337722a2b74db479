package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/node/hubonly"
	"kassa.dev/shared/webhooktest"
	"kassa.dev/sync/wait"
)

// Webhooks at the hub, against real receivers on 127.0.0.1: every
// delivery is checked with two independent verifiers (go-github's
// ValidateSignature for X-Kassa-Signature, the Standard Webhooks library
// for webhook-*), and counted by delivery id.

// whFixture is a hub with an org, a location and a product, that allows
// loopback receivers.
type whFixture struct {
	*ordFixture
	productID string
}

func newWebhookFixture(t *testing.T, tweak func(*node.Config)) *whFixture {
	t.Helper()
	tn := MustStartNode(t, kassa.NodeHub, func(c *node.Config) {
		hubonly.Of(c).Webhooks.CheckURL = func(_ context.Context, raw string) error {
			if u, _ := url.Parse(raw); u != nil && strings.HasSuffix(u.Hostname(), ".internal") {
				return errors.New("internal host")
			}
			return nil
		}
		if tweak != nil {
			tweak(c)
		}
	})
	f := &whFixture{ordFixture: ordFixtureOn(t, tn)}
	f.productID = f.product("Flat white", "FW", 450)
	return f
}

// register registers r for events and gives it the secret; it returns
// the endpoint's id.
func (f *whFixture) register(r *webhooktest.Receiver, events ...string) string {
	f.t.Helper()
	d := f.must(f.do("POST", "/webhooks", "", map[string]any{"url": r.URL(), "events": events}), 201).Data()
	secret, _ := d["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		f.t.Fatalf("registration answer without a whsec_ secret: %v", d)
	}
	r.SetSecret(secret)
	return d["id"].(string)
}

// sale creates an order at location A and returns its id.
func (f *whFixture) sale() string {
	f.t.Helper()
	return f.simpleOrder(f.locA, f.productID, 1)["id"].(string)
}

// log reads an endpoint's deliveries log.
func (f *whFixture) log(id string) []map[string]any {
	f.t.Helper()
	var out []map[string]any
	for _, a := range f.must(f.do("GET", "/webhooks/"+id+"/deliveries", "", nil), 200).List() {
		out = append(out, a.(map[string]any))
	}
	return out
}

// waitLog waits until the endpoint's log holds n attempts.
func (f *whFixture) waitLog(id string, n int) []map[string]any {
	f.t.Helper()
	wait.For(f.t, 5*time.Second, fmt.Sprintf("%d attempts in the log of %s", n, id), func() bool { return len(f.log(id)) >= n })
	return f.log(id)
}

func TestWebhookDeliversAnOrderOnceSignedBothWays(t *testing.T) {
	f := newWebhookFixture(t, nil)
	r := webhooktest.New(t)
	id := f.register(r, kassa.EventOrderCreated)
	if d := f.must(f.do("GET", "/webhooks/"+id, "", nil), 200).Data(); d["secret"] != nil || d["status"] != "active" {
		t.Fatalf("read endpoint shows %v", d)
	}

	order := f.sale()
	f.create("/customers", map[string]any{"first_name": "Ann", "last_name": "Lee"}) // not subscribed
	second := f.sale()
	got := r.WaitFor(5*time.Second, kassa.EventOrderCreated, 2)
	if len(got) != 2 || got[0].Delivery == got[1].Delivery {
		t.Fatalf("deliveries %v", got)
	}
	ids := map[string]bool{}
	for _, g := range got {
		if len(g.Body) != 2 || g.Body["event"] != kassa.EventOrderCreated {
			t.Fatalf("body %s, want exactly {event, data}", g.Raw)
		}
		ids[g.Body["data"].(map[string]any)["id"].(string)] = true
	}
	if !ids[order] || !ids[second] {
		t.Fatalf("delivered orders %v, want %s and %s", ids, order, second)
	}
	if n := len(r.All()); n != 2 {
		t.Fatalf("receiver got %d POSTs, want only the 2 order.created: %v", n, r.All())
	}
	log := f.waitLog(id, 2)
	for _, a := range log {
		if a["status"] != kassa.DeliveryDelivered || a["response_code"] != float64(200) || a["response_body"] != "thanks" ||
			a["attempt"] != float64(1) || a["success"] != true || a["event"] != kassa.EventOrderCreated {
			t.Fatalf("log entry %v", a)
		}
	}
}

func TestWebhookRetriesOnTheScheduleThenFailsAndReplays(t *testing.T) {
	f := newWebhookFixture(t, nil)
	r := webhooktest.New(t)
	r.SetStatus(500)
	r.IgnoreTime()
	id := f.register(r, kassa.EventOrderCreated)
	f.sale()

	first := r.WaitFor(5*time.Second, kassa.EventOrderCreated, 1)[0]
	log := f.waitLog(id, 1)
	if log[0]["status"] != kassa.DeliveryAwaitingRetry || log[0]["success"] != false || log[0]["response_code"] != float64(500) {
		t.Fatalf("after a 500: %v", log[0])
	}
	next, _ := time.Parse(time.RFC3339, log[0]["next_attempt_at"].(string))
	if want := f.tn.Clock.Now().Add(time.Minute); next.Sub(want).Abs() > time.Second {
		t.Fatalf("next attempt at %v, want a minute on (%v)", next, want)
	}
	if n := len(r.All()); n != 1 {
		t.Fatalf("retried before its time: %d POSTs", n)
	}
	f.tn.Clock.Advance(time.Minute)
	r.WaitFor(5*time.Second, kassa.EventOrderCreated, 2)
	if l := f.waitLog(id, 2); l[0]["attempt"] != float64(2) || l[0]["status"] != kassa.DeliveryAwaitingRetry {
		t.Fatalf("after attempt 2: %v", l[0])
	}
	f.tn.Clock.Advance(5 * time.Minute)
	got := r.WaitFor(5*time.Second, kassa.EventOrderCreated, 3)
	log = f.waitLog(id, 3)
	if log[0]["attempt"] != float64(3) || log[0]["status"] != kassa.DeliveryFailed || log[0]["next_attempt_at"] != nil {
		t.Fatalf("after attempt 3: %v", log[0])
	}
	for _, g := range got {
		if g.Delivery != first.Delivery {
			t.Fatalf("delivery id changed across retries: %s then %s", first.Delivery, g.Delivery)
		}
	}

	// Replay: same delivery id, once more.
	r.SetStatus(200)
	retry := f.must(f.do("POST", "/webhooks/"+id+"/logs/"+log[0]["id"].(string)+"/retry", "", nil), 202).Data()
	if retry["delivery_id"] != first.Delivery || retry["status"] != kassa.DeliveryPending {
		t.Fatalf("retry answer %v", retry)
	}
	got = r.WaitFor(5*time.Second, kassa.EventOrderCreated, 4)
	if got[3].Delivery != first.Delivery {
		t.Fatalf("replayed as %s, want %s", got[3].Delivery, first.Delivery)
	}
	log = f.waitLog(id, 4)
	if log[0]["attempt"] != float64(4) || log[0]["status"] != kassa.DeliveryDelivered {
		t.Fatalf("after the replay: %v", log[0])
	}
	mustProblem(t, f.do("POST", "/webhooks/"+id+"/logs/"+log[0]["id"].(string)+"/retry", "", nil), 409, "conflict")
	mustProblem(t, f.do("POST", "/webhooks/"+id+"/logs/"+ordNoSuchID+"/retry", "", nil), 404, "not-found")
}

func TestWebhookHangAndRefusalRetryWithoutDelayingOthers(t *testing.T) {
	f := newWebhookFixture(t, func(c *node.Config) { hubonly.Of(c).Webhooks.Timeout = 3 * time.Second })
	hung, healthy := webhooktest.New(t), webhooktest.New(t)
	release := make(chan struct{})
	hung.Hang(release)
	hungID := f.register(hung, kassa.EventOrderCreated)
	healthyID := f.register(healthy, kassa.EventOrderCreated)
	// A refused connection: a port that was just closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/hook"
	ln.Close()
	refusedID := f.must(f.do("POST", "/webhooks", "", map[string]any{"url": closed, "events": []string{kassa.EventOrderCreated}}), 201).Data()["id"].(string)

	began := time.Now()
	f.sale()
	f.sale()
	healthy.WaitFor(5*time.Second, kassa.EventOrderCreated, 2)
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("healthy endpoint waited %v behind a hanging one", d)
	}
	if l := f.waitLog(refusedID, 2); l[0]["status"] != kassa.DeliveryAwaitingRetry || !strings.Contains(l[0]["error"].(string), "refused") ||
		strings.Contains(l[0]["error"].(string), "/hook") {
		t.Fatalf("refused connection logged as %v", l[0])
	}
	l := f.waitLog(hungID, 1)
	if l[0]["status"] != kassa.DeliveryAwaitingRetry || l[0]["error"] != "no answer within 3s" || l[0]["response_code"] != float64(0) {
		t.Fatalf("hang logged as %v", l[0])
	}
	if n := len(f.log(healthyID)); n != 2 {
		t.Fatalf("healthy endpoint's log holds %d attempts, want 2", n)
	}
}

func TestWebhookInactiveEndpointReceivesNothing(t *testing.T) {
	f := newWebhookFixture(t, nil)
	paused, active := webhooktest.New(t), webhooktest.New(t)
	pausedID := f.register(paused, kassa.WebhookAllEvents)
	f.register(active, kassa.EventOrderCreated)
	if d := f.must(f.do("PATCH", "/webhooks/"+pausedID, "", map[string]any{"status": "inactive"}), 200).Data(); d["status"] != "inactive" {
		t.Fatalf("PATCH answered %v", d)
	}
	f.sale()
	active.WaitFor(5*time.Second, kassa.EventOrderCreated, 1)
	if got := paused.All(); len(got) != 0 {
		t.Fatalf("inactive endpoint received %v", got)
	}
	if l := f.log(pausedID); len(l) != 0 {
		t.Fatalf("inactive endpoint's log %v", l)
	}
	// Resumed, it receives what happens from then on.
	f.must(f.do("PATCH", "/webhooks/"+pausedID, "", map[string]any{"status": "active"}), 200)
	order := f.sale()
	got := paused.WaitFor(5*time.Second, kassa.EventOrderCreated, 1)
	if got[0].Body["data"].(map[string]any)["id"] != order {
		t.Fatalf("resumed endpoint got %s", got[0].Raw)
	}
}

func TestWebhookTestPingAndRotationTakeEffectAtOnce(t *testing.T) {
	f := newWebhookFixture(t, nil)
	r := webhooktest.New(t)
	id := f.register(r, kassa.EventOrderCreated)
	res := f.must(f.do("POST", "/webhooks/"+id+"/test", "", nil), 200).Data()
	if res["success"] != true || res["responseCode"] != float64(200) || res["responseBody"] != "thanks" || !kassa.ValidID(res["deliveryId"].(string)) {
		t.Fatalf("test answer %v", res)
	}
	ping := r.Of(kassa.EventTestPing)
	if len(ping) != 1 || ping[0].Delivery != res["deliveryId"] || ping[0].Body["data"].(map[string]any)["timestamp"] == nil {
		t.Fatalf("test.ping received as %v", ping)
	}

	old := r.Secret()
	rot := f.must(f.do("POST", "/webhooks/"+id+"/rotate-secret", "", nil), 200).Data()
	fresh, _ := rot["secret"].(string)
	if !strings.HasPrefix(fresh, "whsec_") || fresh == old {
		t.Fatalf("rotation answer %v", rot)
	}
	// The receiver still holds the old secret: the next delivery fails
	// its verification at once.
	res = f.must(f.do("POST", "/webhooks/"+id+"/test", "", nil), 200).Data()
	if res["success"] != false || res["responseCode"] != float64(401) {
		t.Fatalf("signed with the old secret after rotation: %v", res)
	}
	r.SetSecret(fresh)
	f.sale()
	r.WaitFor(5*time.Second, kassa.EventOrderCreated, 1)
	if l := f.waitLog(id, 3); len(l) != 3 || l[0]["event"] != kassa.EventOrderCreated || l[2]["event"] != kassa.EventTestPing {
		t.Fatalf("log %v", l)
	}
}

func TestWebhookRoutesRefuseBadInputAndOtherOrgs(t *testing.T) {
	f := newWebhookFixture(t, nil)
	r := webhooktest.New(t)
	id := f.register(r, kassa.EventOrderCreated)
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"url": "ftp://example.com/x", "events": []string{kassa.EventOrderCreated}}, "url"},
		{map[string]any{"url": "https://user:pw@example.com/x", "events": []string{kassa.EventOrderCreated}}, "url"},
		{map[string]any{"url": "https://hooks.internal/x", "events": []string{kassa.EventOrderCreated}}, "url"},
		{map[string]any{"url": "https://example.com/x", "events": []string{}}, "events"},
		{map[string]any{"url": "https://example.com/x", "events": []string{"order.exploded"}}, "events"},
		{map[string]any{"url": "https://example.com/x", "events": []string{"*", kassa.EventOrderCreated}}, "events"},
	} {
		p := mustProblem(t, f.do("POST", "/webhooks", "", c.body), 422, "validation")
		if errs, _ := p["errors"].([]any); len(errs) == 0 || errs[0].(map[string]any)["field"] != c.field {
			t.Fatalf("%v: problem %v, want field %s", c.body, p, c.field)
		}
	}
	mustProblem(t, f.do("PATCH", "/webhooks/"+id, "", map[string]any{"status": "paused"}), 422, "validation")
	if l := f.must(f.do("GET", "/webhooks", "", nil), 200).List(); len(l) != 1 {
		t.Fatalf("bad registrations stored: %v", l)
	}

	other := f.tn.MustOrg("Other Cafe")
	for _, c := range [][2]string{{"GET", ""}, {"PATCH", ""}, {"DELETE", ""}, {"POST", "/test"}, {"GET", "/deliveries"}, {"POST", "/rotate-secret"}} {
		var body any
		if c[0] == "PATCH" {
			body = map[string]any{"status": "inactive"}
		}
		mustProblem(t, f.tn.Do(c[0], "/api/v1/webhooks/"+id+c[1], other.Owner, body), 404, "not-found")
	}
	if len(r.All()) != 0 {
		t.Fatalf("another org's call reached the receiver: %v", r.All())
	}
	if d := f.do("DELETE", "/webhooks/"+id, "", nil); d.Status != 204 {
		t.Fatalf("delete: %d %s", d.Status, d.Body)
	}
	mustProblem(t, f.do("GET", "/webhooks/"+id, "", nil), 404, "not-found")
}

// TestWebhookRegistrationRetryCreatesNoSecondEndpoint: a client that
// retries POST /webhooks with the same Idempotency-Key (its first answer
// lost) gets no second endpoint and no second secret: a 409 that names the
// endpoint the first request created, whose secret it may rotate. A
// refused first request replays as usual; another body with the key is
// 422; another caller's key is its own. Rotation retried with its key
// rotates once (issue 21, contract deviations).
func TestWebhookRegistrationRetryCreatesNoSecondEndpoint(t *testing.T) {
	f := newWebhookFixture(t, nil)
	rcv := webhooktest.New(t)
	body := map[string]any{"url": rcv.URL(), "events": []string{kassa.EventOrderCreated}}
	post := func(path, tok, key string, body any) *resp {
		if tok == "" {
			tok = f.org.Owner
		}
		return f.tn.Do("POST", "/api/v1"+path, tok, body, "Idempotency-Key", key)
	}
	first := post("/webhooks", "", "wh-1", body)
	if first.Status != 201 {
		t.Fatalf("register: %d %s", first.Status, first.Body)
	}
	id, secret := first.Data()["id"].(string), first.Data()["secret"].(string)
	for range 2 {
		again := post("/webhooks", "", "wh-1", body)
		p := mustProblem(t, again, 409, "conflict")
		if !strings.Contains(p["detail"].(string), id) || strings.Contains(string(again.Body), secret) ||
			again.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("the retry: %s", again.Body)
		}
	}
	if l := f.must(f.do("GET", "/webhooks", "", nil), 200).List(); len(l) != 1 || l[0].(map[string]any)["id"] != id {
		t.Fatalf("endpoints after two retries: %v", l)
	}
	mustProblem(t, post("/webhooks", "", "wh-1", map[string]any{"url": rcv.URL(), "events": []string{kassa.EventOrderCompleted}}), 422, "validation")

	bad := map[string]any{"url": "ftp://x", "events": []string{kassa.EventOrderCreated}}
	refused := post("/webhooks", "", "wh-bad", bad)
	mustProblem(t, refused, 422, "validation")
	if again := post("/webhooks", "", "wh-bad", bad); again.Status != 422 || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("a refused registration's retry: %d %v", again.Status, again.Header)
	}

	other := f.tn.MustOrg("Other webhooks")
	if r := post("/webhooks", other.Owner, "wh-1", body); r.Status != 201 || r.Data()["id"] == id {
		t.Fatalf("another org's request with the same key: %d %s", r.Status, r.Body)
	}

	rot := post("/webhooks/"+id+"/rotate-secret", "", "rot-1", nil)
	if rot.Status != 200 {
		t.Fatalf("rotate: %d %s", rot.Status, rot.Body)
	}
	fresh := rot.Data()["secret"].(string)
	again := post("/webhooks/"+id+"/rotate-secret", "", "rot-1", nil)
	mustProblem(t, again, 409, "conflict")
	if strings.Contains(string(again.Body), fresh) {
		t.Fatalf("the rotation's retry shows the secret: %s", again.Body)
	}
	rcv.SetSecret(fresh)
	if res := f.must(f.do("POST", "/webhooks/"+id+"/test", "", nil), 200).Data(); res["success"] != true {
		t.Fatalf("the secret of the one rotation does not sign: %v", res)
	}
}
