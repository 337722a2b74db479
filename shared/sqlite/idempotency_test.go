package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

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
	if err := db.Write(paid, effect); err != nil {
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

// TestIdempotencyAnswersKeptTogetherReplayEach: requests completing at
// once share the unit that keeps their answers; each key replays its own.
func TestIdempotencyAnswersKeptTogetherReplayEach(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "k.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := NewIdempotencyStore(db)
	const n = 32
	errs := make(chan error, n)
	for i := range n {
		go func() {
			key := fmt.Sprint("k", i)
			rctx, _, err := store.Begin(ctx, "org/user", key, "fp")
			if err == nil {
				err = db.Write(rctx, func(tx *Tx) error {
					_, err := tx.ExecContext(rctx, `INSERT INTO node_meta (key, value) VALUES (?, '1')`, key)
					return err
				})
			}
			if err == nil {
				err = store.Complete(rctx, "org/user", key, &kassa.IdempotentResponse{Status: 201, Body: []byte(key)})
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		key := fmt.Sprint("k", i)
		_, r, err := store.Begin(ctx, "org/user", key, "fp")
		if err != nil || r == nil || r.Status != 201 || string(r.Body) != key {
			t.Fatalf("replay of %s: %+v %v", key, r, err)
		}
	}
}

// TestIdempotencyAnswerNeedsNoCommitOfItsOwn: a request's answer goes
// out once its effect committed, without waiting for the unit that keeps
// the answer (the writer is held busy here); a retry meanwhile replays it
// from memory, and once kept (Flush) it replays from the table after a
// restart.
func TestIdempotencyAnswerNeedsNoCommitOfItsOwn(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "k.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	store := NewIdempotencyStore(db)
	rctx, _, err := store.Begin(ctx, "org/user", "sale-1", "fp")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Write(rctx, func(tx *Tx) error {
		_, err := tx.ExecContext(rctx, `INSERT INTO node_meta (key, value) VALUES ('sold', '1')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	running, release := make(chan struct{}), make(chan struct{})
	busy := make(chan error, 1)
	go func() {
		busy <- db.Write(ctx, func(*Tx) error { close(running); <-release; return nil })
	}()
	<-running // the writer is held: no unit can keep the answer now
	completed := make(chan error, 1)
	go func() {
		completed <- store.Complete(rctx, "org/user", "sale-1", &kassa.IdempotentResponse{Status: 201, Body: []byte("sold")})
	}()
	select {
	case err := <-completed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the answer waited for a commit of its own")
	}
	if _, r, err := store.Begin(ctx, "org/user", "sale-1", "fp"); err != nil || r == nil || string(r.Body) != "sold" {
		t.Fatalf("retry while the answer is being kept: %+v %v, want the answer", r, err)
	}
	if _, _, err := store.Begin(ctx, "org/user", "sale-1", "fp-else"); kassa.ErrorKind(err) != kassa.EInvalid {
		t.Fatalf("another body while the answer is being kept: %v, want 422", err)
	}
	close(release)
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	store.Flush()
	db.Close()

	db, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, r, err := NewIdempotencyStore(db).Begin(ctx, "org/user", "sale-1", "fp"); err != nil || r == nil || r.Status != 201 || string(r.Body) != "sold" {
		t.Fatalf("replay after a restart: %+v %v", r, err)
	}
}

// TestIdempotencyKeepsItsOwnCopyOfTheKey: the answer is kept after the
// request returned, when the server may reuse the buffer its key and
// scope strings pointed into (Fiber does): the record is kept under the
// key as it was sent.
func TestIdempotencyKeepsItsOwnCopyOfTheKey(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "k.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := NewIdempotencyStore(db)
	buf := []byte("org/user key-aaaa")
	scope, key := unsafe.String(&buf[0], 8), unsafe.String(&buf[9], 8)
	rctx, _, err := store.Begin(ctx, scope, key, "fp")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Write(rctx, func(tx *Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := store.Complete(rctx, scope, key, &kassa.IdempotentResponse{Status: 201, Body: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	copy(buf, "org/else key-bbbb") // the next request in the same buffer
	store.Flush()
	if _, r, err := store.Begin(ctx, "org/user", "key-aaaa", "fp"); err != nil || r == nil || string(r.Body) != "a" {
		t.Fatalf("replay of the key as sent: %+v %v", r, err)
	}
	if _, r, err := store.Begin(ctx, "org/else", "key-bbbb", "fp"); err != nil || r != nil {
		t.Fatalf("the buffer's next key: %+v %v, want a fresh key", r, err)
	}
}
