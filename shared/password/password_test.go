package password

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"
)

func TestVerifyMatchesAndReportsStaleParameters(t *testing.T) {
	h, err := Hash("right")
	if err != nil {
		t.Fatal(err)
	}
	if ok, stale, err := Verify(context.Background(), "right", h); !ok || stale || err != nil {
		t.Fatalf("current hash: ok %v stale %v err %v", ok, stale, err)
	}
	if ok, _, _ := Verify(context.Background(), "wrong", h); ok {
		t.Fatal("wrong password matched")
	}
	old, _ := argon2id.CreateHash("right", &argon2id.Params{Memory: 8 * 1024, Iterations: 1, Parallelism: 2, SaltLength: 16, KeyLength: 32})
	if ok, stale, err := Verify(context.Background(), "right", old); !ok || !stale || err != nil {
		t.Fatalf("old hash: ok %v stale %v err %v", ok, stale, err)
	}
	if ok, _, err := Verify(context.Background(), "right", "not a hash"); ok || err != nil {
		t.Fatalf("garbage hash: ok %v err %v", ok, err)
	}
}

func TestHashingWaitsForASlotAndGivesUp(t *testing.T) {
	defer func(w time.Duration) { Wait = w }(Wait)
	Wait = 50 * time.Millisecond
	s := slots()
	for range cap(s) {
		s <- struct{}{} // every slot busy
	}
	if _, err := Hash("x"); !errors.Is(err, ErrBusy) {
		t.Fatalf("Hash with no free slot: %v", err)
	}
	if err := CheckMissing(context.Background(), "x"); !errors.Is(err, ErrBusy) {
		t.Fatalf("CheckMissing with no free slot: %v", err)
	}
	<-s // one slot frees up
	if _, err := Hash("x"); err != nil {
		t.Fatalf("Hash with a free slot: %v", err)
	}
	for range cap(s) - 1 {
		<-s
	}
}
