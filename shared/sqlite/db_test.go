package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// TestLullFoldsTheWALIntoTheDatabaseFile writes a few products — far
// fewer pages than SQLite's own automatic checkpoint waits for — and
// expects them in the database file itself once the writer has been idle:
// a copy of that file alone (what a file backup of a quiet store takes)
// holds them.
func TestLullFoldsTheWALIntoTheDatabaseFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.db")
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := orgCtx(mustOrg(t, db))
	for i := range 20 {
		mustProduct(t, ctx, db, fmt.Sprint("LULL-", i))
	}
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; ; {
		n = productsInFileAlone(t, path)
		if n == 20 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database file alone holds %d of 20 products 10 s after the last write", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOrdersTakenAtOnceOnOneReaderAllComplete takes orders from many
// terminals at once on a store with a single reader connection, with
// every statement still unprepared: an order is priced inside one read
// transaction, and nothing in it may wait for a second reader.
func TestOrdersTakenAtOnceOnOneReaderAllComplete(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "k.db"), Options{Readers: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := wrapNode(t, db)
	w := seed(t, n)
	ctx, cancel := context.WithTimeout(w.ctx, 20*time.Second)
	defer cancel()
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			o, err := n.orders.CreateOrder(ctx, &kassa.OrderCreate{LocationID: w.loc, CustomerID: &w.customer,
				LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}, {ProductID: w.p2, Quantity: 2}}})
			if err == nil {
				_, err = n.orders.FindOrderByID(ctx, o.ID)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// productsInFileAlone copies the main database file without its WAL and
// counts the products the copy holds.
func productsInFileAlone(t *testing.T, path string) int {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy.db")
	src, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, src); err != nil {
		t.Fatal(err)
	}
	out.Close()
	c, err := sql.Open(driverName, "file:"+dst)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.QueryRow(`SELECT count(*) FROM products`).Scan(&n); err != nil {
		return 0 // the copy may predate the products table
	}
	return n
}
