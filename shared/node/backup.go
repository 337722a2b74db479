package node

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"kassa.dev/shared/envflag"
	"kassa.dev/shared/sqlite"
)

// Backups and restores of a node's store (the `backup` and `restore`
// subcommands of both binaries). See docs/deploy.md.

// ErrExists is returned when a backup or restore would overwrite a file or
// a data directory and --force was not given.
var ErrExists = sqlite.ErrExists

// storeFile is the store's file in a data directory.
func storeFile(dataDir string) string { return filepath.Join(dataDir, "kassa.db") }

// Backup writes a consistent copy of the store in dataDir to out while the
// node may keep running on it (another process, WAL mode); the copy is
// checked (PRAGMA integrity_check) before it takes the name out. An
// existing out is kept (ErrExists) unless force.
func Backup(ctx context.Context, dataDir, out string, force bool) error {
	return sqlite.Backup(ctx, storeFile(dataDir), out, force)
}

// CheckBackup checks a backup file: its integrity, and that it opens as a
// store (migrating a copy would change it, so only the file is opened).
func CheckBackup(ctx context.Context, path string) error { return sqlite.CheckFile(ctx, path) }

// RestoreEdge puts the backup file into dataDir as the edge's store. The
// edge must be stopped; a data directory with anything in it is refused
// (ErrExists) unless force. The restored store is marked so that its
// first pulls get back the edge's own changes made after the backup (the
// hub has them) and its order numbers skip ahead (OrderNumberGap).
func RestoreEdge(ctx context.Context, backup, dataDir string, force bool) error {
	return restore(ctx, backup, dataDir, force, (*sqlite.DB).MarkRestored)
}

// RestoreHub puts the backup file into dataDir as the hub's store, under
// the same conditions as RestoreEdge, and gives its log a new epoch: every
// edge that sees it pulls the log from the start and pushes its whole
// outbox again, so what they sent after the backup reaches the hub again
// and no edge skips log positions its cursor had passed.
func RestoreHub(ctx context.Context, backup, dataDir string, force bool) error {
	return restore(ctx, backup, dataDir, force, func(db *sqlite.DB, ctx context.Context) error {
		_, err := db.NewLogEpoch(ctx)
		return err
	})
}

// restore puts the backup in place, then opens it (migrating an older
// one) and runs mark on it.
func restore(ctx context.Context, backup, dataDir string, force bool, mark func(*sqlite.DB, context.Context) error) error {
	if err := restoreFile(ctx, backup, dataDir, force); err != nil {
		return err
	}
	db, err := sqlite.Open(ctx, storeFile(dataDir), sqlite.Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer db.Close()
	return mark(db, ctx)
}

func restoreFile(ctx context.Context, backup, dataDir string, force bool) error {
	if es, err := os.ReadDir(dataDir); err == nil && len(es) > 0 && !force {
		return fmt.Errorf("%w: the data directory %s is not empty", ErrExists, dataDir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	return sqlite.RestoreFile(ctx, backup, storeFile(dataDir), force)
}

// URLStores back up and restore a store named by a URL (a hub's --store
// postgres://…, docs/postgres.md): the hub's binary gives them
// (hubonly.StoreBackups); an edge has none, its store is always the file
// in its data directory. Backup writes the store to out (ErrExists for an
// existing out unless force); Restore loads a backup into the store's
// database, made when missing (ErrExists for one that holds tables unless
// force).
type URLStores struct {
	Backup  func(ctx context.Context, store, out string, force bool) error
	Restore func(ctx context.Context, backup, store string, force bool) error
}

// storeFlag adds --store to fs where the binary has URL stores: the
// store, when given, replaces the file in --data-dir.
func storeFlag(fs *flag.FlagSet, urls *URLStores) *string {
	if urls == nil {
		return new(string)
	}
	return fs.String("store", "", "the hub's store when not the SQLite file in --data-dir: a postgres:// URL, as the hub's --store")
}

// shown is a store or data directory as a command prints it: a URL
// without its password.
func shown(at string) string {
	if u, err := url.Parse(at); err == nil && strings.Contains(at, "://") {
		return u.Redacted()
	}
	return at
}

// BackupCommand runs `backup`: usage `backup --data-dir D --out FILE
// [--force]` (a hub also `--store postgres://…`); the flags may also come
// from KASSA_* variables, as the node's own do (KASSA_DATA_DIR,
// KASSA_STORE).
func BackupCommand(ctx context.Context, args []string, getenv func(string) string, defaultDir string, out io.Writer, urls *URLStores) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(out)
	dir := fs.String("data-dir", defaultDir, "the node's data directory (the node may keep running)")
	store := storeFlag(fs, urls)
	file := fs.String("out", "", "the backup file to write")
	force := fs.Bool("force", false, "overwrite an existing backup file")
	if err := envflag.Parse(fs, args, "KASSA_", getenv); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("backup: --out is required")
	}
	if *store != "" {
		if err := urls.Backup(ctx, *store, *file, *force); err != nil {
			return err
		}
		fmt.Fprintf(out, "backup of %s written to %s (pg_dump custom format; pg_restore --list ok)\n", shown(*store), *file)
		return nil
	}
	if err := Backup(ctx, *dir, *file, *force); err != nil {
		return err
	}
	fmt.Fprintf(out, "backup of %s written to %s (integrity check ok)\n", *dir, *file)
	return nil
}

// restoreHubStore loads a backup into a hub's store named by a URL and
// gives its log a new epoch, as RestoreHub does for the file.
func restoreHubStore(ctx context.Context, urls *URLStores, backup, store string, force bool) error {
	if err := urls.Restore(ctx, backup, store, force); err != nil {
		return err
	}
	db, err := OpenStoreAt(ctx, store)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.NewLogEpoch(ctx)
	return err
}

// RestoreCommand runs `restore` with RestoreEdge or RestoreHub: usage
// `restore --backup FILE --data-dir D [--force]` (the file may also be
// the one argument); a hub's `restore --store postgres://… FILE` loads a
// pg_dump backup into that database instead (URLStores).
func RestoreCommand(ctx context.Context, args []string, getenv func(string) string, defaultDir string, out io.Writer,
	restore func(ctx context.Context, backup, dataDir string, force bool) error, urls *URLStores) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(out)
	dir := fs.String("data-dir", defaultDir, "the data directory to restore into (the node must be stopped)")
	store := storeFlag(fs, urls)
	file := fs.String("backup", "", "the backup file to restore")
	force := fs.Bool("force", false, "replace the store of a data directory (or a database) that is not empty")
	if err := envflag.Parse(fs, args, "KASSA_", getenv); err != nil {
		return err
	}
	if *file == "" && fs.NArg() == 1 {
		*file = fs.Arg(0)
	}
	if *file == "" {
		return errors.New("restore: --backup is required")
	}
	into := *dir
	var err error
	if *store != "" {
		into, err = shown(*store), restoreHubStore(ctx, urls, *file, *store, *force)
	} else {
		err = restore(ctx, *file, *dir, *force)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "restored %s into %s; start the node: it catches up with its peers (docs/deploy.md)\n", *file, into)
	return nil
}

// Command is a subcommand of a binary (edge <name> args…, hub <name> args…).
type Command func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error

// Commands are the subcommands both binaries have besides running the
// node: backup (of a running node's store), restore (into a stopped
// node's data directory, with restore), healthcheck and reports-rebuild
// (of a stopped node's report rollups, report.go). dataDir and
// httpAddr are the binary's defaults; urls, the hub's, adds --store to
// backup, restore and reports-rebuild (nil on an edge). See docs/deploy.md.
func Commands(dataDir, httpAddr string, restore func(ctx context.Context, backup, dataDir string, force bool) error, urls *URLStores) map[string]Command {
	return map[string]Command{
		"backup": func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
			return BackupCommand(ctx, args, getenv, dataDir, out, urls)
		},
		"restore": func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
			return RestoreCommand(ctx, args, getenv, dataDir, out, restore, urls)
		},
		"healthcheck": func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
			return HealthCommand(ctx, args, getenv, httpAddr, out)
		},
		"reports-rebuild": func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
			return RebuildCommand(ctx, args, getenv, dataDir, out, urls)
		},
	}
}
