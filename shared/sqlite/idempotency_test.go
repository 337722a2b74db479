package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"kassa.dev/shared/kassa"
)

// TestIdempotencyKeyAcrossACrash: the key's record commits with its
// request's effect, in the effect's own unit. A crash after that commit
// but before the answer was kept never runs the effect twice (a retry is
// 409, another body 422); a crash before any commit leaves the key free,
// so a retry runs (today's main left it answering 409 for 24 h). Begin
// takes no writer unit.
func TestIdempotencyKeyAcrossACrash(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "k.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	store := NewIdempotencyStore(db)
	units := db.WriterStats().Units
	paid, _, err := store.Begin(ctx, "org/user", "pay-1", "fp-pay")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Begin(ctx, "org/user", "never-ran", "fp-other"); err != nil {
		t.Fatal(err)
	}
	if got := db.WriterStats().Units; got != units {
		t.Fatalf("Begin ran %d writer units, want none", got-units)
	}
	effect := func(tx *Tx) error {
		_, err := tx.ExecContext(paid, `INSERT INTO node_meta (key, value) VALUES ('paid', '1')`)
		return err
	}
	if err := db.write(paid, effect); err != nil {
		t.Fatal(err)
	}
	if got := db.WriterStats().Units; got != units+1 {
		t.Fatalf("the request ran %d writer units before its answer, want 1", got-units)
	}
	db.Close() // the crash: neither answer was kept

	db, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store = NewIdempotencyStore(db)
	if _, r, err := store.Begin(ctx, "org/user", "pay-1", "fp-pay"); r != nil || kassa.ErrorKind(err) != kassa.EConflict {
		t.Fatalf("retry of a committed payment whose answer was lost: %v %v, want 409 (never paid twice)", r, err)
	}
	if _, _, err := store.Begin(ctx, "org/user", "pay-1", "fp-else"); kassa.ErrorKind(err) != kassa.EInvalid {
		t.Fatalf("the committed key with another body: %v, want 422", err)
	}
	if _, r, err := store.Begin(ctx, "org/user", "never-ran", "fp-other"); r != nil || err != nil {
		t.Fatalf("retry of a request that committed nothing: %v %v, want it to run", r, err)
	}
	if v, _ := db.Meta(ctx, "paid"); v != "1" {
		t.Fatalf("the committed effect: %q", v)
	}
}
