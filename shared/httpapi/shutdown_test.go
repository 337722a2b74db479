package httpapi_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// TestANodeStopsWithAConnectionThatNeverAsked: an HTTP client may open a
// connection it then never uses (Go's transport dials a spare one when
// requests queue, and keeps it idle when another frees up first). The
// server sees a new connection with no request, which its graceful stop
// once waited on until the read timeout (30 s) — past the node's
// --shutdown-timeout, so main returned "context deadline exceeded". A
// stop now closes such connections, and ends with the requests it was
// serving.
func TestANodeStopsWithAConnectionThatNeverAsked(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	addr := strings.TrimPrefix(tn.URL, "http://")
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	// A request answered on another connection, kept alive after it.
	res, err := http.Get(tn.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tn.N.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a connection that never sent a request: %v", err)
	}
	silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := silent.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the silent connection is still open after the stop (read %d bytes)", n)
	}
}
