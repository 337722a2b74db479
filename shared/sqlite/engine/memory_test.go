package engine

import (
	"database/sql"
	"path/filepath"
	"testing"
)

func TestSQLiteMemoryIsBounded(t *testing.T) {
	if arenasCapped == 0 {
		t.Errorf("mallopt refused to cap malloc's arenas at %d", mallocArenas)
	}
	t.Logf("mallopt(M_ARENA_MAX, %d): %d (1 capped, -1 not glibc)", mallocArenas, arenasCapped)
	db, err := sql.Open(DriverName, "file:"+filepath.Join(t.TempDir(), "kassa.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var limit int64
	if err := db.QueryRow("PRAGMA soft_heap_limit").Scan(&limit); err != nil {
		t.Fatal(err)
	}
	if limit != HeapLimit {
		t.Errorf("soft_heap_limit %d, want %d", limit, HeapLimit)
	}
}

func TestAReaderKeepsASmallCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kassa.db")
	w, err := openWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	r, err := openReaders(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var readerCache, writerCache string
	if err := r.QueryRow("PRAGMA cache_size").Scan(&readerCache); err != nil {
		t.Fatal(err)
	}
	if err := w.QueryRow("PRAGMA cache_size").Scan(&writerCache); err != nil {
		t.Fatal(err)
	}
	if readerCache != readerCacheKiB || writerCache == readerCacheKiB {
		t.Errorf("cache_size: reader %s, writer %s; want the reader's %s, the writer SQLite's default", readerCache, writerCache, readerCacheKiB)
	}
}
