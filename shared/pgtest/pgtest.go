// Package pgtest runs a throwaway PostgreSQL for tests: initdb into a
// temporary folder, the server on a free port of 127.0.0.1, a DSN, and the
// server stopped (by its PID) and its folder removed when the test ends.
// Running as root (CI, this project's machines), initdb and the server run
// as the postgres user, as PostgreSQL requires. A test is skipped, with the
// reason, only where no PostgreSQL binaries exist; .ci/run installs
// Debian's postgresql package where they are missing (docs/postgres.md).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"kassa.dev/sync/freeport"
)

// Server is one running throwaway PostgreSQL.
type Server struct {
	// DSN connects to its postgres database as the superuser postgres.
	DSN  string
	Port int
	Dir  string
	// PID is the postmaster's process id.
	PID  int
	done chan error
}

// binDirs are where PostgreSQL's server binaries are looked for after
// $PATH: Debian's versioned folders, the newest first.
func binDirs() []string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	return dirs
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Binaries returns the folder holding initdb and postgres, or why there
// is none.
func Binaries() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	for _, d := range binDirs() {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL binaries (initdb, postgres) on $PATH or in /usr/lib/postgresql/*/bin: install Debian's postgresql package (.ci/run does)")
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

var started atomic.Int64

// Start runs a new PostgreSQL for tb and stops it when tb ends. It skips
// tb only when no PostgreSQL binaries exist; any other failure fails it.
func Start(tb testing.TB) *Server {
	tb.Helper()
	if _, err := Binaries(); err != nil {
		tb.Skip("pgtest: " + err.Error())
	}
	s, err := start()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("pgtest: stopping PostgreSQL (pid %d): %v", s.PID, err)
		}
		os.RemoveAll(s.Dir)
	})
	return s
}

// start runs a new PostgreSQL in a new folder, s.Dir, which the caller
// removes after stopping it.
func start() (*Server, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tempBase(cred), fmt.Sprintf("kassa-pg-%d-", started.Add(1)))
	if err != nil {
		return nil, err
	}
	removeDir := func() { os.RemoveAll(dir) }
	if err := own(dir, cred); err != nil {
		removeDir()
		return nil, err
	}
	if out, err := command(filepath.Join(bin, "initdb"), cred, "-D", dir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync").CombinedOutput(); err != nil {
		removeDir()
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	var s *Server
	for attempt := 0; s == nil; attempt++ { // a free port can be taken before the server binds it
		s, err = serve(bin, dir, cred)
		if err != nil && attempt == 2 {
			removeDir()
			return nil, err
		}
	}
	return s, nil
}

// runAs is the user initdb and the server run as: nil for the current
// one, the postgres user's when running as root (PostgreSQL refuses root).
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the postgres user to run PostgreSQL as (.ci/run creates it): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// tempBase is where the data folder goes: the usual temporary folder, or
// /tmp when PostgreSQL's user could not reach into that one (a root's
// private $TMPDIR).
func tempBase(cred *syscall.Credential) string {
	base := os.TempDir()
	if cred == nil {
		return base
	}
	for d := base; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return "/tmp"
		}
		if d == filepath.Dir(d) {
			return base
		}
	}
}

func own(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return os.Chown(dir, int(cred.Uid), int(cred.Gid))
}

func command(name string, cred *syscall.Credential, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return cmd
}

// StatementsEnv, when set, loads pg_stat_statements into every throwaway
// server, for a bench that reports what the database ran
// (BenchmarkIngest's KASSA_BENCH_PGSTAT, docs/performance.md).
const StatementsEnv = "KASSA_BENCH_PGSTAT"

// ArgsEnv names more settings for the throwaway server, space-separated
// name=value pairs (each passed as -c), for a look inside a run: e.g.
// "shared_preload_libraries=auto_explain auto_explain.log_min_duration=0
// auto_explain.sample_rate=0.01 auto_explain.log_analyze=on
// logging_collector=on log_directory=/tmp/pglog" logs sampled plans where
// they outlive the server's temporary folder (docs/postgres.md).
const ArgsEnv = "KASSA_PG_ARGS"

// serve starts the postmaster on a free port and waits until it accepts a
// connection. The settings trade durability for speed: a test's database
// does not outlive it.
func serve(bin, dir string, cred *syscall.Credential) (*Server, error) {
	port, err := freeport.Pick()
	if err != nil {
		return nil, err
	}
	cmd := command(filepath.Join(bin, "postgres"), cred, "-D", dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200",
		"-c", "autovacuum_naptime=1") // a hub's statistics follow a catch-up (docs/postgres.md, "Statistics during a catch-up")
	for _, a := range strings.Fields(os.Getenv(ArgsEnv)) {
		cmd.Args = append(cmd.Args, "-c", a)
	}
	if os.Getenv(StatementsEnv) != "" {
		cmd.Args = append(cmd.Args, "-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track=all",
			"-c", "pg_stat_statements.track_planning=on")
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	// If the test binary dies (a timeout's panic), the kernel ends the
	// postmaster too; the signal follows the thread that started it, so
	// that thread stays locked until the postmaster exits.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	s := &Server{Port: port, Dir: dir, done: make(chan error, 1),
		DSN: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)}
	startErr := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			startErr <- err
			return
		}
		startErr <- nil
		s.done <- cmd.Wait()
	}()
	if err := <-startErr; err != nil {
		return nil, fmt.Errorf("starting postgres: %w", err)
	}
	s.PID = cmd.Process.Pid
	if err := s.ready(30 * time.Second); err != nil {
		s.Stop()
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		return nil, fmt.Errorf("%w\n%s", err, log)
	}
	return s, nil
}

// ready waits, up to d, for the server to accept a connection, and fails
// at once if it exits.
func (s *Server) ready(d time.Duration) error {
	deadline := time.Now().Add(d)
	pause := 5 * time.Millisecond
	for {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("postgres exited before accepting connections: %v", err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.DSN)
		cancel()
		if err == nil {
			return conn.Close(context.Background())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections within %s: %v", d, err)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Stop ends the server by its PID (a fast shutdown: open sessions are
// ended) and waits for it to exit.
func (s *Server) Stop() error {
	if err := syscall.Kill(s.PID, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	select {
	case err := <-s.done:
		s.done <- err
		return nil
	case <-time.After(30 * time.Second):
		syscall.Kill(s.PID, syscall.SIGKILL)
		return errors.New("did not stop within 30s; killed")
	}
}

// Database creates a new empty database on s for tb and returns its DSN:
// tests that share one server each get their own database.
func (s *Server) Database(tb testing.TB) string {
	tb.Helper()
	name := "t" + strconv.FormatInt(started.Add(1), 10) + "_" + strings.ToLower(strconv.FormatInt(time.Now().UnixNano(), 36))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.DSN)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		tb.Fatal(err)
	}
	return strings.Replace(s.DSN, "/postgres?", "/"+name+"?", 1)
}
