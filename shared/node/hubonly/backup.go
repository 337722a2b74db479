package hubonly

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"kassa.dev/shared/node"
)

// StoreBackups back up and restore a hub's store on PostgreSQL (`hub
// backup --store postgres://…`, `hub restore --store postgres://… FILE`)
// with PostgreSQL's own tools: a pg_dump custom-format archive, loaded by
// pg_restore into an empty or new database (docs/postgres.md, "Backups
// and restores on PostgreSQL"; the runbook in docs/ops.md).
var StoreBackups = &node.URLStores{Backup: dumpStore, Restore: restoreStore}

// pgTool finds one of PostgreSQL's client programs: beside initdb (the
// server's own version, where the server runs here), then on $PATH, then
// in Debian's versioned folders, the newest first.
func pgTool(name string) (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && isFile(filepath.Join(filepath.Dir(real), name)) {
			return filepath.Join(filepath.Dir(real), name), nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return debianVersion(dirs[i]) > debianVersion(dirs[j]) })
	for _, d := range dirs {
		if isFile(filepath.Join(d, name)) {
			return filepath.Join(d, name), nil
		}
	}
	return "", fmt.Errorf("%s not found beside initdb, on $PATH or in /usr/lib/postgresql/*/bin: install PostgreSQL's client programs (Debian: postgresql-client)", name)
}

func debianVersion(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// runTool runs a PostgreSQL program; its error carries what it said.
func runTool(ctx context.Context, name string, stdout *os.File, args ...string) error {
	bin, err := pgTool(name)
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &stderr
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// dumpStore writes the database store to out with pg_dump -Fc (one
// consistent snapshot; the hubs keep running), owner-only, and checks
// that pg_restore reads the archive before it takes the name out.
func dumpStore(ctx context.Context, store, out string, force bool) error {
	if _, err := os.Stat(out); err == nil && !force {
		return fmt.Errorf("%w: %s", node.ErrExists, out)
	}
	part := out + ".partial"
	f, err := os.OpenFile(part, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(part)
	err = runTool(ctx, "pg_dump", f, "--format=custom", "--dbname="+store)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = runTool(ctx, "pg_restore", nil, "--list", part)
	}
	if err != nil {
		return err
	}
	return os.Rename(part, out)
}

// restoreStore loads the archive backup into the database store, made
// (sorting text as C, as the hub needs) when missing. A database that
// holds tables is refused unless force; with force pg_restore drops what
// the archive holds before loading it. The load is one transaction.
func restoreStore(ctx context.Context, backup, store string, force bool) error {
	if _, err := os.Stat(backup); err != nil {
		return err
	}
	if err := ensureEmpty(ctx, store, force); err != nil {
		return err
	}
	args := []string{"--exit-on-error", "--single-transaction", "--no-owner", "--no-privileges", "--dbname=" + store}
	if force {
		args = append(args, "--clean", "--if-exists")
	}
	if err := runTool(ctx, "pg_restore", nil, append(args, backup)...); err != nil {
		return err
	}
	return checkXIDs(ctx, store)
}

// ensureEmpty makes the database when it does not exist, and refuses
// one that holds tables unless force.
func ensureEmpty(ctx context.Context, store string, force bool) error {
	conn, err := pgx.Connect(ctx, store)
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "3D000" {
		if err := createDatabase(ctx, store); err != nil {
			return err
		}
		conn, err = pgx.Connect(ctx, store)
	}
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var tables int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&tables); err != nil {
		return err
	}
	if tables > 0 && !force {
		return fmt.Errorf("%w: the database %s holds %d tables (restore into an empty or new database, or --force)", node.ErrExists, conn.Config().Database, tables)
	}
	return nil
}

// createDatabase makes store's database from the server's postgres
// database, with the C collation and UTF-8 the hub needs.
func createDatabase(ctx context.Context, store string) error {
	cfg, err := pgx.ParseConfig(store)
	if err != nil {
		return err
	}
	name := cfg.Database
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'")
	return err
}

// checkXIDs refuses a restored database whose log holds transaction ids
// the server has not reached yet (a dump loaded into another, younger
// cluster): the log's rows are keyed by their transaction's id, so the
// server's next transactions would collide with them. The data is in
// place; docs/postgres.md says how to move the server's ids past them.
func checkXIDs(ctx context.Context, store string) error {
	conn, err := pgx.Connect(ctx, store)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var ahead bool
	var top string
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(xid), '0'::xid8) >= pg_current_xact_id(), coalesce(max(xid), '0'::xid8)::text
		FROM outbox_commits`).Scan(&ahead, &top); err != nil {
		return err
	}
	if ahead {
		return fmt.Errorf("the restored log holds transaction ids up to %s, beyond this server's: stop the server, raise its transaction id epoch (pg_resetwal --epoch, docs/postgres.md) and restore again with --force", top)
	}
	return nil
}
