package hubonly

// The hub's webhook sender and the webhook service (kassa.WebhookService).
//
// Deliveries are queued in the store with their event (sqlite.fanOutWebhooks);
// the sender only reads the queue and records attempts, so a delivery whose
// attempt was cut off by a crash is still due after the restart and is sent
// again with the same id. One worker per endpoint sends that endpoint's due
// deliveries one at a time, in order: a slow or dead endpoint holds up only
// its own worker. The job wakes the workers on the bus (an event committed),
// and looks for due retries on a timer that never sleeps longer than
// webhookPoll, reading times from the node's clock (Config.Now).

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/eventbus"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/sqlite"
)

// WebhookConfig configures the hub's webhook sender.
type WebhookConfig struct {
	// RetryDelays are the pauses before the second, third… attempts
	// (nil: kassa.DefaultWebhookRetryDelays).
	RetryDelays []time.Duration
	// Timeout bounds one attempt (0: kassa.DefaultWebhookTimeout).
	Timeout time.Duration
	// Client sends the POSTs; it must not follow redirects and should
	// check every address it connects to (nil: a plain client that
	// follows no redirects). The hub binary sets the egress client.
	Client *http.Client
	// CheckURL refuses a registered URL whose host is internal (nil: any
	// host). The hub binary sets the egress check.
	CheckURL func(ctx context.Context, rawURL string) error
	// AllowLoopback (--webhook-allow-loopback) lets endpoints on loopback
	// addresses through the egress check, for development and tests. The
	// egress package, wired in by the hub binary, reads it.
	AllowLoopback bool
}

// webhookPoll is the longest the sender waits without looking for due
// deliveries: retries come due on the clock, which may also jump.
const webhookPoll = time.Second

// webhookBatch is how many due deliveries a worker reads at once.
const webhookBatch = 32

// webhookClaims is how a sender takes an endpoint's due deliveries and
// lets them go once their attempts are recorded: the store's read on
// SQLite (one hub, one sender), the database's claim on PostgreSQL, where
// every hub's sender reads one queue and each delivery is sent by one
// (pgClaims).
type webhookClaims interface {
	Due(ctx context.Context, endpoint string, now time.Time, limit int) ([]sqlite.WebhookDelivery, error)
	Release(ctx context.Context, ids []string) error
}

// storeClaims reads the store's due deliveries: nothing to release.
type storeClaims struct{ store *sqlite.WebhookStore }

func (c storeClaims) Due(ctx context.Context, endpoint string, now time.Time, limit int) ([]sqlite.WebhookDelivery, error) {
	return c.store.WebhookDue(ctx, endpoint, now, limit)
}

func (storeClaims) Release(context.Context, []string) error { return nil }

type webhookSender struct {
	store  *sqlite.WebhookStore
	claims webhookClaims
	cfg    WebhookConfig
	now    func() time.Time
	log    *slog.Logger

	mu      sync.Mutex
	workers map[string]chan struct{} // endpoint id → its worker's wake-up
	kick    chan struct{}            // wakes the job

	attempts *prometheus.CounterVec // kassa_webhook_deliveries_total{result}
	dead     prometheus.Counter     // kassa_webhook_dead_total
}

func newWebhookSender(store *sqlite.WebhookStore, cfg WebhookConfig, now func() time.Time, log *slog.Logger) *webhookSender {
	if cfg.RetryDelays == nil {
		cfg.RetryDelays = kassa.DefaultWebhookRetryDelays
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = kassa.DefaultWebhookTimeout
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &webhookSender{store: store, claims: storeClaims{store}, cfg: cfg, now: now, log: log, workers: map[string]chan struct{}{}, kick: make(chan struct{}, 1),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kassa_webhook_deliveries_total",
			Help: "Webhook delivery attempts by the hub's sender, by result (ok: a 2xx answer in time)."}, []string{"result"}),
		dead: prometheus.NewCounter(prometheus.CounterOpts{Name: "kassa_webhook_dead_total",
			Help: "Webhook deliveries that gave up after their last attempt (status failed)."}),
	}
}

// collectors are the sender's /metrics (docs/ops.md): attempts by result,
// deliveries given up, and the deliveries waiting in the store.
func (s *webhookSender) collectors() []prometheus.Collector {
	s.attempts.WithLabelValues("ok") // both results exist from the start
	s.attempts.WithLabelValues("failed")
	queue := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kassa_webhook_queue",
		Help: "Webhook deliveries waiting to be sent (pending or awaiting a retry)."}, func() float64 {
		n, err := s.store.WebhookQueueLen(context.Background())
		if err != nil {
			return -1
		}
		return float64(n)
	})
	oldest := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kassa_webhook_oldest_seconds",
		Help: "Age of the oldest webhook delivery still waiting to be sent (0: none waits)."}, func() float64 {
		at, err := s.store.WebhookOldestWaiting(context.Background())
		if err != nil {
			return -1
		}
		if at.IsZero() {
			return 0
		}
		return max(s.now().Sub(at).Seconds(), 0)
	})
	return []prometheus.Collector{s.attempts, s.dead, queue, oldest}
}

// wake makes the job look for due deliveries now.
func (s *webhookSender) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// job is the hub's webhook sender; bus wakes it after a commit.
func (s *webhookSender) job(bus *eventbus.Bus) node.Job {
	return node.Job{Name: "webhooks", Run: func(ctx context.Context) error {
		sub := bus.Subscribe(256, nil)
		defer sub.Close()
		var wg sync.WaitGroup
		defer wg.Wait()
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case e, ok := <-sub.C:
				if !ok {
					return nil
				}
				for _, org := range burstOrgs(e, sub.C) {
					ids, err := s.store.ActiveWebhookEndpoints(ctx, org)
					if err != nil {
						return err
					}
					s.poke(ctx, &wg, ids)
				}
				continue
			case <-s.kick:
			case <-t.C:
			}
			due, later, err := s.store.WebhookEndpointsDue(ctx, s.now())
			if err != nil {
				return err
			}
			s.poke(ctx, &wg, due)
			wait := webhookPoll
			if !later.IsZero() {
				wait = min(wait, max(later.Sub(s.now()), time.Millisecond))
			}
			t.Reset(wait)
		}
	}}
}

// burstOrgs are the orgs of event first and of the events queued behind
// it: a commit publishes its events together (a catch-up's batch, one
// per order), and each org's endpoints are read once for them, not once
// an event.
func burstOrgs(first kassa.Event, queued <-chan kassa.Event) []string {
	orgs := []string{first.OrgID}
	for {
		select {
		case e, ok := <-queued:
			if !ok {
				return orgs
			}
			if !slices.Contains(orgs, e.OrgID) {
				orgs = append(orgs, e.OrgID)
			}
		default:
			return orgs
		}
	}
}

// poke wakes the workers of endpoints, starting those not running.
func (s *webhookSender) poke(ctx context.Context, wg *sync.WaitGroup, endpoints []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range endpoints {
		w, ok := s.workers[id]
		if !ok {
			w = make(chan struct{}, 1)
			s.workers[id] = w
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.work(ctx, id, w)
			}()
		}
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// work sends endpoint's due deliveries until none is due, then waits to
// be woken; it ends when it finds nothing due twice in a row.
func (s *webhookSender) work(ctx context.Context, endpoint string, wake chan struct{}) {
	defer func() {
		s.mu.Lock()
		delete(s.workers, endpoint)
		s.mu.Unlock()
	}()
	idle := 0
	for ctx.Err() == nil {
		ds, err := s.claims.Due(ctx, endpoint, s.now(), webhookBatch)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("reading due webhook deliveries", slog.String("endpoint", endpoint), slog.Any("err", err))
			}
			return
		}
		if !s.send(ctx, ds) {
			return
		}
		if len(ds) > 0 {
			idle = 0
			continue
		}
		if idle++; idle > 1 {
			return
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-time.After(webhookPoll):
		}
	}
}

// send attempts ds in order and records the attempts in few units: after
// a failed attempt (so a failing endpoint's log and schedule are current
// at once), once the oldest unrecorded success is webhookPoll old, and at
// the end. A success is not written before the next POST: one commit per
// POST would bound an endpoint's throughput by the writer's commits. A
// crash re-sends the unrecorded successes, with the same delivery ids.
// It reports whether the worker may go on (not shut down, recorded).
func (s *webhookSender) send(ctx context.Context, ds []sqlite.WebhookDelivery) bool {
	outs := make([]sqlite.WebhookOutcome, 0, len(ds))
	from := 0 // ds[from:len(outs)] are sent, not recorded
	var oldest time.Time
	record := func() bool {
		if from == len(outs) {
			return true
		}
		err := s.store.RecordWebhookAttempts(context.WithoutCancel(ctx), ds[from:len(outs)], outs[from:])
		if err != nil {
			s.log.Error("recording webhook attempts", slog.String("delivery", ds[from].ID), slog.Any("err", err))
			return false
		}
		s.release(ctx, ds[from:len(outs)])
		from = len(outs)
		return true
	}
	for i := range ds {
		if ctx.Err() != nil {
			break
		}
		o := s.attempt(ctx, &ds[i])
		if ctx.Err() != nil {
			break // cut off by shutdown: still due, sent again after the restart
		}
		if from == len(outs) {
			oldest = time.Now()
		}
		outs = append(outs, o)
		if o.Status != kassa.DeliveryDelivered || time.Since(oldest) >= webhookPoll {
			if !record() {
				return false
			}
		}
	}
	return record() && ctx.Err() == nil
}

// release ends the claims on ds, whose attempts are recorded; a claim
// left (the database did not answer) ends with its lease.
func (s *webhookSender) release(ctx context.Context, ds []sqlite.WebhookDelivery) {
	ids := make([]string, len(ds))
	for i := range ds {
		ids[i] = ds[i].ID
	}
	if err := s.claims.Release(context.WithoutCancel(ctx), ids); err != nil {
		s.log.Warn("releasing webhook claims", slog.Int("deliveries", len(ids)), slog.Any("err", err))
	}
}

// attempt makes one attempt of d and says how it went and what follows.
func (s *webhookSender) attempt(ctx context.Context, d *sqlite.WebhookDelivery) sqlite.WebhookOutcome {
	o := s.post(ctx, &d.WebhookTarget, d.ID, d.Event, d.Body)
	if o.Err == "" && kassa.WebhookSuccess(o.Code) {
		o.Status = kassa.DeliveryDelivered
	} else if next, ok := kassa.WebhookNextAttempt(s.cfg.RetryDelays, d.Attempts+1, o.At); ok {
		o.Status, o.Next = kassa.DeliveryAwaitingRetry, next
	} else {
		o.Status = kassa.DeliveryFailed
	}
	if o.Status == kassa.DeliveryDelivered {
		s.attempts.WithLabelValues("ok").Inc()
	} else {
		s.attempts.WithLabelValues("failed").Inc()
	}
	if o.Status == kassa.DeliveryFailed {
		s.dead.Inc()
	}
	return o
}

// post sends one signed POST and reports the answer (Status unset).
func (s *webhookSender) post(ctx context.Context, t *sqlite.WebhookTarget, id, event string, body []byte) sqlite.WebhookOutcome {
	at := s.now()
	o := sqlite.WebhookOutcome{At: at}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		o.Err = "the endpoint's URL cannot be used"
		return o
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Kassa-Webhooks/1")
	for k, v := range kassa.WebhookHeaders(t.Secret, id, event, at, body) {
		req.Header.Set(k, v)
	}
	began := time.Now()
	resp, err := s.cfg.Client.Do(req)
	if err == nil {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, kassa.WebhookResponseLimit))
		resp.Body.Close()
		o.Code, o.Body = resp.StatusCode, string(b)
		if err = ctx.Err(); err != nil && kassa.WebhookSuccess(o.Code) {
			err = nil // answered in time; the body was cut off after
		}
	}
	o.Duration = time.Since(began)
	if err != nil {
		o.Err = attemptError(err, s.cfg.Timeout)
	}
	return o
}

// attemptError words a failed attempt for the log without the URL (whose
// query may hold a receiver's token).
func attemptError(err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer within " + timeout.String()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// webhookService is kassa.WebhookService: the store's endpoints and log,
// the URL check at registration and the sender for tests and replays.
type webhookService struct {
	*sqlite.WebhookStore
	sender *webhookSender
}

var _ kassa.WebhookService = (*webhookService)(nil)

func (w *webhookService) checkURL(ctx context.Context, raw string) error {
	if w.sender.cfg.CheckURL == nil {
		return nil
	}
	if err := w.sender.cfg.CheckURL(ctx, raw); err != nil {
		return kassa.InvalidField("url", "must not point at an internal or private address")
	}
	return nil
}

func (w *webhookService) CreateWebhook(ctx context.Context, in *kassa.WebhookCreate) (*kassa.WebhookEndpointSecret, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if err := w.checkURL(ctx, in.URL); err != nil {
		return nil, err
	}
	return w.WebhookStore.CreateWebhook(ctx, in, kassa.NewWebhookSecret())
}

func (w *webhookService) UpdateWebhook(ctx context.Context, id string, in *kassa.WebhookUpdate) (*kassa.WebhookEndpoint, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if in.URL.Set {
		if err := w.checkURL(ctx, in.URL.Value); err != nil {
			return nil, err
		}
	}
	ep, err := w.WebhookStore.UpdateWebhook(ctx, id, in)
	if err == nil {
		w.sender.wake() // a resumed endpoint's held deliveries
	}
	return ep, err
}

func (w *webhookService) RotateWebhookSecret(ctx context.Context, id string) (*kassa.WebhookEndpointSecret, error) {
	return w.WebhookStore.RotateWebhookSecret(ctx, id, kassa.NewWebhookSecret())
}

func (w *webhookService) RetryWebhookDelivery(ctx context.Context, id, logID string) (*kassa.WebhookAttempt, error) {
	a, err := w.WebhookStore.RetryWebhookDelivery(ctx, id, logID)
	if err == nil {
		w.sender.wake()
	}
	return a, err
}

// TestWebhook sends a signed test.ping at once (also to an inactive
// endpoint: the owner asked for it), records it as a delivery of one
// attempt, and answers how it went. A failed test is not retried on its
// own; it can be replayed.
func (w *webhookService) TestWebhook(ctx context.Context, id string) (*kassa.WebhookTestResult, error) {
	t, err := w.WebhookTarget(ctx, id)
	if err != nil {
		return nil, err
	}
	data := []byte(`{"timestamp":"` + w.sender.now().UTC().Format(time.RFC3339) + `"}`)
	d := sqlite.WebhookDelivery{ID: w.NewID(), Event: kassa.EventTestPing,
		Body: kassa.WebhookBody(kassa.EventTestPing, data), WebhookTarget: *t}
	o := w.sender.post(ctx, t, d.ID, d.Event, d.Body)
	ok := o.Err == "" && kassa.WebhookSuccess(o.Code)
	o.Status = kassa.DeliveryFailed
	if ok {
		o.Status = kassa.DeliveryDelivered
	}
	if err := w.RecordWebhookTest(context.WithoutCancel(ctx), &d, o); err != nil {
		return nil, err
	}
	return &kassa.WebhookTestResult{DeliveryID: d.ID, Success: ok, ResponseCode: o.Code, ResponseBody: o.Body}, nil
}
