package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Backups and restores of a store file. A backup is taken with VACUUM INTO
// over a connection of its own, in one read transaction: in WAL mode that
// is a consistent snapshot of the last commit and it never blocks the
// node's writer, so the node keeps selling while it runs.

// ErrExists is returned when a backup or restore would overwrite a file
// or a store and force was not given.
var ErrExists = errors.New("sqlite: the target exists (use --force to overwrite it)")

// Backup copies the store at src (a node may be running on it) into a
// new file dst: written under a temporary name next to dst, checked with
// PRAGMA integrity_check, then moved into place. An existing dst is kept
// (ErrExists) unless force.
func Backup(ctx context.Context, src, dst string, force bool) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("sqlite: backup: no store: %w", err)
	}
	if !force {
		if _, err := os.Stat(dst); err == nil {
			return fmt.Errorf("%w: %s", ErrExists, dst)
		}
	}
	tmp := tempName(dst)
	defer os.Remove(tmp)
	db, err := openRaw(src, true)
	if err != nil {
		return err
	}
	defer db.Close()
	// VACUUM INTO writes into an empty file: made here, it is the node's
	// own account's only (storeFileMode), as the store is.
	if err := ownerOnly(tmp); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return fmt.Errorf("sqlite: backup %s: %w", src, err)
	}
	if err := CheckFile(ctx, tmp); err != nil {
		return err
	}
	return place(tmp, dst, force)
}

// CheckFile runs PRAGMA integrity_check on the store file at path and
// checks that it is a Kassa store (it has a node id).
func CheckFile(ctx context.Context, path string) error {
	db, err := openRaw(path, true)
	if err != nil {
		return err
	}
	defer db.Close()
	var res []string
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("sqlite: check %s: %w", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		res = append(res, s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: check %s: %w", path, err)
	}
	if len(res) != 1 || res[0] != "ok" {
		return fmt.Errorf("sqlite: %s fails the integrity check: %s", path, strings.Join(res, "; "))
	}
	var id string
	if err := db.QueryRowContext(ctx, `SELECT value FROM node_meta WHERE key = 'node_id'`).Scan(&id); err != nil || id == "" {
		return fmt.Errorf("sqlite: %s is not a Kassa store (no node id): %v", path, err)
	}
	return nil
}

// RestoreFile copies the backup at src into place as the store file dst,
// after checking it; an existing dst (and its WAL) is replaced only with
// force. The node on dst must be stopped.
func RestoreFile(ctx context.Context, src, dst string, force bool) error {
	if err := CheckFile(ctx, src); err != nil {
		return err
	}
	if _, err := os.Stat(dst); err == nil && !force {
		return fmt.Errorf("%w: %s", ErrExists, dst)
	}
	tmp := tempName(dst)
	defer os.Remove(tmp)
	if err := copyFile(src, tmp); err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(dst + suffix); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return place(tmp, dst, force)
}

// openRaw opens a store file with a plain connection (no migrations, no
// writer loop), read-only when ro.
func openRaw(path string, ro bool) (*sql.DB, error) {
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	if ro {
		q.Set("mode", "ro")
	}
	db, err := sql.Open(driverName, "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

func tempName(dst string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-"+hex.EncodeToString(b))
}

// place moves tmp to dst: atomically replacing dst with force, else by a
// hard link that fails when dst exists (no window where another writer's
// file is overwritten).
func place(tmp, dst string, force bool) error {
	if force {
		return os.Rename(tmp, dst)
	}
	if err := os.Link(tmp, dst); err != nil {
		if os.IsExist(err) {
			return fmt.Errorf("%w: %s", ErrExists, dst)
		}
		return err
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
