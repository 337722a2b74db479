package node

import (
	"flag"
	"fmt"
	"log/slog"
	"time"

	"kassa.dev/shared/httpapi"
)

// Flags are the command-line settings both binaries share. Every flag can
// also be set as KASSA_<NAME> in the environment (package envflag).
type Flags struct {
	Config
	HTTPAddr        string
	NATSHost        string
	NATSPort        int    // 0: no client listener
	NATSToken       string // outside clients' token on the NATS client listener
	TLS             TLSFiles
	Demo            bool
	LogLevel        slog.Level
	ShutdownTimeout time.Duration
	GCPercent       int
	GoProcs         int
	// MemoryLimit is --memory-limit as given (ParseMemoryLimit).
	MemoryLimit string
	// MetricsAddr, when set, is where /metrics is served instead of the
	// API listener (--metrics-addr).
	MetricsAddr string
}

// DefaultGCPercent is the -gc-percent default. A node's live heap is small
// and every request allocates, so at Go's default (100) the collector runs
// many times a second at a rush, taking the CPU from request handlers and
// the writer (measurements: docs/performance.md, "Order-flow performance").
// GOMEMLIMIT still caps the heap where memory is tight.
const DefaultGCPercent = 400

// The login throttles' defaults. A password check costs about 35 ms of one
// core and 19 MiB (package password), so the global default of 10 a second
// keeps logins to about a third of a core at most; one address (a
// terminal, an office) gets 30 a minute, 20 at once.
const (
	DefaultLoginPerMinute   = 600
	DefaultLoginBurst       = 60
	DefaultLoginIPPerMinute = 30
	DefaultLoginIPBurst     = 20
)

// Defaults are a node kind's flag defaults.
type Defaults struct {
	HTTPAddr, DataDir        string
	RatePerMinute, RateBurst int
	// WriterPriority: the edge raises its writer (terminals wait on it at
	// a rush); the hub does not, as there the raised writer's background
	// work (kitchen tickets of synced orders) starved the ingest of edges'
	// changes (docs/performance.md).
	WriterPriority int
}

// Bind defines the shared flags on fs with the node kind's defaults.
func (f *Flags) Bind(fs *flag.FlagSet, d Defaults) {
	fs.StringVar(&f.HTTPAddr, "http-addr", d.HTTPAddr, "HTTP listen address of the API")
	fs.StringVar(&f.DataDir, "data-dir", d.DataDir, "directory of the SQLite file and NATS storage")
	fs.StringVar(&f.NATSHost, "nats-host", "127.0.0.1", "listen host of the embedded NATS server")
	fs.IntVar(&f.NATSPort, "nats-port", 0, "client port of the embedded NATS server for outside clients (0: none, the default; -1: any free port); needs --nats-token")
	fs.StringVar(&f.NATSToken, "nats-token", "", "token outside NATS clients present on --nats-port (at least 16 characters); they get no JetStream and none of the node's subjects")
	fs.StringVar(&f.TLS.Cert, "tls-cert", "", "PEM certificate: HTTP serves HTTPS; on the hub the leaf listener requires TLS")
	fs.StringVar(&f.TLS.Key, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&f.TLS.CA, "tls-ca", "", "PEM CA the edge verifies the hub with (enrolment over HTTPS, the leaf link over TLS)")
	fs.StringVar(&f.ErrorsBase, "errors-base", "https://kassa.dev/problems", "prefix of problem type URIs")
	fs.IntVar(&f.BodyLimit, "body-limit", 1<<20, "largest accepted request body in bytes")
	fs.IntVar(&f.BodyBudget, "body-budget", httpapi.DefaultBodyBudget, "bytes of request bodies over 8 KiB read or handled at once; more wait, then 429")
	fs.IntVar(&f.MaxConns, "max-conns", httpapi.DefaultMaxConns, "open HTTP connections at most (WebSockets apart); more are answered 503 and closed")
	fs.IntVar(&f.RatePerMinute, "rate-per-minute", d.RatePerMinute, "per-org API requests per minute (0: no limit)")
	fs.IntVar(&f.RateBurst, "rate-burst", d.RateBurst, "per-org API burst")
	fs.IntVar(&f.LoginPerMinute, "login-per-minute", DefaultLoginPerMinute, "login attempts per minute at this node, all addresses together")
	fs.IntVar(&f.LoginBurst, "login-burst", DefaultLoginBurst, "login attempts at once at this node, all addresses together")
	fs.IntVar(&f.LoginIPPerMinute, "login-ip-per-minute", DefaultLoginIPPerMinute, "login attempts per minute from one client address")
	fs.IntVar(&f.LoginIPBurst, "login-ip-burst", DefaultLoginIPBurst, "login attempts at once from one client address")
	fs.Func("trusted-proxies", "reverse proxies (comma-separated IPs or CIDR ranges) whose X-Forwarded-For names the client "+
		"for the login throttles and the access log; default none: the header is ignored", func(v string) (err error) {
		f.TrustedProxies, err = httpapi.ParseTrustedProxies(v)
		return err
	})
	fs.StringVar(&f.MetricsAddr, "metrics-addr", "", "serve /metrics on this address of its own (127.0.0.1:9090) instead of the API listener; default: on the API listener")
	fs.StringVar(&f.MetricsToken, "metrics-token", "", "bearer token (at least 16 characters) a scraper must send for /metrics; default: none, /metrics is open")
	fs.BoolVar(&f.Demo, "demo", false, "seed the demo org (Demo Coffee) on start if it does not exist")
	fs.TextVar(&f.LogLevel, "log-level", slog.LevelInfo, "log level: DEBUG, INFO, WARN, ERROR")
	fs.DurationVar(&f.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long shutdown waits for in-flight requests")
	fs.DurationVar(&f.WSPing, "ws-ping", 20*time.Second, "how often WebSocket connections are pinged; a peer that does not answer within the next ping is cut off")
	fs.IntVar(&f.WSMaxConns, "ws-max-conns", 5000, "open WebSocket connections at most, all orgs together")
	fs.IntVar(&f.WSMaxOrgConns, "ws-max-org-conns", 1000, "open WebSocket connections at most per org")
	fs.IntVar(&f.GCPercent, "gc-percent", DefaultGCPercent, "Go garbage collector target percentage (0: leave it to GOGC)")
	fs.IntVar(&f.GoProcs, "go-procs", 0, "Go processors (GOMAXPROCS); 0: one more than Go's setting when the writer thread can be raised, else Go's; negative: Go's")
	fs.StringVar(&f.MemoryLimit, "memory-limit", "0", "Go memory limit, e.g. 96MiB; 0: a quarter of the machine's memory, edge 48-64 MiB, hub 64-80 MiB; off: none; GOMEMLIMIT wins")
	fs.IntVar(&f.WriterPriority, "writer-priority", d.WriterPriority, "nice levels the store's writer thread is raised above the rest (Linux; needs CAP_SYS_NICE or LimitNICE; negative: off)")
}

// MinNATSToken is the shortest --nats-token accepted.
const MinNATSToken = 16

// MinMetricsToken is the shortest --metrics-token accepted.
const MinMetricsToken = 16

// Check reports flag combinations a node must not start with.
func (f *Flags) Check() error {
	if f.NATSPort != 0 && len(f.NATSToken) < MinNATSToken {
		return fmt.Errorf("--nats-port needs --nats-token of at least %d characters: the NATS client port admits no client without it", MinNATSToken)
	}
	if f.NATSPort == 0 && f.NATSToken != "" {
		return fmt.Errorf("--nats-token without --nats-port: there is no NATS client listener to use it on")
	}
	if f.MetricsToken != "" && len(f.MetricsToken) < MinMetricsToken {
		return fmt.Errorf("--metrics-token must have at least %d characters", MinMetricsToken)
	}
	if (f.TLS.Cert == "") != (f.TLS.Key == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together")
	}
	return nil
}
