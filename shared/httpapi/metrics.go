package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"kassa.dev/shared/kassa"
)

// metrics are the Prometheus collectors of one server, in a registry of its
// own so that several nodes can run in one process (tests do).
type metrics struct {
	Registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics() *metrics {
	m := &metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kassa_http_requests_total", Help: "HTTP requests by method, route template and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kassa_http_request_duration_seconds", Help: "HTTP request latency by method and route template.",
			Buckets: []float64{.001, .0025, .005, .01, .02, .05, .1, .25, .5, 1, 2.5},
		}, []string{"method", "route"}),
	}
	m.Registry.MustRegister(m.requests, m.duration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(method, route string, status int, d time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(d.Seconds())
}

func (m *metrics) handler() fiber.Handler {
	return adaptor.HTTPHandler(promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
}

// Registry returns the server's Prometheus registry so that the node can
// add its own collectors (sync lag, outbox depth).
func (s *Server) Registry() *prometheus.Registry { return s.metrics.Registry }

// scrapeAllowed reports whether an Authorization header value carries the
// metrics token (always, when none is set); hashes compared in constant time.
func (s *Server) scrapeAllowed(authorization string) bool {
	if s.cfg.MetricsToken == "" {
		return true
	}
	raw, ok := strings.CutPrefix(authorization, "Bearer ")
	sum := sha256.Sum256([]byte(strings.TrimSpace(raw)))
	return ok && subtle.ConstantTimeCompare(sum[:], s.scraper[:]) == 1
}

// metricsGuard refuses a scrape of the API listener's /metrics without the
// metrics token (401).
func (s *Server) metricsGuard(c *fiber.Ctx) error {
	if !s.scrapeAllowed(c.Get(fiber.HeaderAuthorization)) {
		return kassa.Errorf(kassa.EUnauthorized, "/metrics needs the metrics token as a bearer token")
	}
	return c.Next()
}

// MetricsHandler serves /metrics on a listener of its own (--metrics-addr),
// behind the metrics token when one is set; other paths are 404.
func (s *Server) MetricsHandler() http.Handler {
	prom := promhttp.HandlerFor(s.metrics.Registry, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/metrics":
			http.NotFound(w, r)
		case !s.scrapeAllowed(r.Header.Get("Authorization")):
			w.Header().Set("WWW-Authenticate", `Bearer realm="kassa-metrics"`)
			http.Error(w, "/metrics needs the metrics token as a bearer token", http.StatusUnauthorized)
		default:
			prom.ServeHTTP(w, r)
		}
	})
}
