package hubnode

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
)

// TestHubStoreAndBackupFilesAreOwnerOnly runs the hub under the usual
// umask 022, sells through it, backs it up while it runs, stops it and
// restores the backup: every file the node keeps (the SQLite store, its
// WAL and shared memory, NATS storage, the demo token) and the backup
// are 0600, every directory 0700, so another account on the machine reads
// no password hash or sale (issue 21, N9).
func TestHubStoreAndBackupFilesAreOwnerOnly(t *testing.T) {
	pgtest.SkipOnPostgres(t, "the store and its backup are SQLite files (pg_dump backs up PostgreSQL)")
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, backups := filepath.Join(root, "hub"), filepath.Join(root, "backups")
	if err := os.Mkdir(backups, 0o755); err != nil {
		t.Fatal(err)
	}
	p := nodetest.Start(t, Run, nil, "--demo", "--http-addr", "127.0.0.1:0", "--data-dir", dir, "--leaf-port", "-1")
	tok := p.Login(t, "owner@demo.test", demo.Password)
	if st := p.Call(t, "POST", "/api/v1/customers", tok, map[string]any{"first_name": "Private", "email": "private@example.com"}, nil); st != 201 {
		t.Fatalf("create customer: %d", st)
	}
	backup := filepath.Join(backups, "hub.db")
	backupCmd := Commands["backup"]
	if err := backupCmd(context.Background(), []string{"--data-dir", dir, "--out", backup}, func(string) string { return "" }, io.Discard); err != nil {
		t.Fatal(err)
	}
	ownerOnly(t, dir) // while it runs: the WAL and shared memory are there
	ownerOnly(t, backup)
	p.Stop(t)

	restored := filepath.Join(root, "restored")
	restoreCmd := Commands["restore"]
	if err := restoreCmd(context.Background(), []string{"--backup", backup, "--data-dir", restored}, func(string) string { return "" }, io.Discard); err != nil {
		t.Fatal(err)
	}
	ownerOnly(t, restored)
}

// ownerOnly fails the test for a file under path that is not 0600 or a
// directory that is not 0700, and for a store without its WAL.
func ownerOnly(t *testing.T, path string) {
	t.Helper()
	var files []string
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", p, info.Mode().Perm(), want)
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files and directories under %s", len(files), path)
}
