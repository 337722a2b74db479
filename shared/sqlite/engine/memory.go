package engine

/*
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
static int capArenas(int n) { return mallopt(M_ARENA_MAX, n); }
#else
static int capArenas(int n) { return -1; }
#endif
*/
import "C"

import (
	"fmt"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// SQLite's memory is C memory, outside Go's memory limit: a node's RSS is
// Go's (up to node.MemoryLimitBounds), the binary's pages and this. Three
// bounds keep this part small (docs/performance.md, "Memory figures on
// this machine (session 18)"):
//
// HeapLimit is SQLite's soft heap limit, for every connection of the
// process together (PRAGMA soft_heap_limit is process-wide): past it the
// page caches recycle their least recently used pages instead of growing.
// Without it each connection's cache grows to its cache_size, and a hub's
// connections under mixed traffic held 18-19 MiB in all. The page
// caches of the readers are worth little anyway: in WAL mode a reader's
// cache is dropped at its next read after any other connection commits,
// so under writes they only hold what one read touched.
const HeapLimit = 8 << 20

// readerCacheKiB is each reader's cache_size (negative: KiB), a quarter
// of SQLite's default: a reader's cache only serves the read that filled
// it (above), and what the readers hold would otherwise take the heap
// limit's room from the writer's cache, which its commits keep valid.
const readerCacheKiB = "-512"

// mallocArenas caps glibc's malloc arenas, where SQLite's memory lives.
// glibc gives each thread that allocates at the same time as another its
// own arena (up to 8 per CPU), each with its own slack; SQLite runs on
// whichever Go thread holds its connection, so a hub under mixed traffic
// had eight or more, of 1-5 MiB each. Two arenas: the writer and the
// readers contend briefly on malloc's locks only.
const mallocArenas = 2

// arenasCapped is mallopt's answer: 1 capped, 0 refused, -1 not glibc
// (musl has one arena).
var arenasCapped = int(C.capArenas(C.int(mallocArenas)))

// boundHeap sets the soft heap limit (HeapLimit) from a new connection.
func boundHeap(c *sqlite3.SQLiteConn) error {
	_, err := c.Exec(fmt.Sprintf("PRAGMA soft_heap_limit = %d", HeapLimit), nil)
	return err
}
