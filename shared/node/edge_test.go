package node

import (
	"context"
	"log/slog"
	"testing"

	"kassa.dev/shared/kassa"
)

// TestAnEdgeKeepsItsLeafRemoteWhenAnotherHubListsTheSameURLs: every hub
// of a cluster lists its own leaf URL first and any hub may answer an
// edge's pull. The same URLs in another order are no news: replacing the
// leaf remote for them dropped the edge's live link each time another hub
// answered (the failover test's edge stayed unlinked, docs/cluster.md).
// A new URL in the set is news.
func TestAnEdgeKeepsItsLeafRemoteWhenAnotherHubListsTheSameURLs(t *testing.T) {
	ctx := context.Background()
	n, err := Open(ctx, Config{Kind: kassa.NodeEdge, DataDir: t.TempDir()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	a, b, c := "nats-leaf://127.0.0.1:7422", "nats-leaf://127.0.0.1:7423", "nats-leaf://127.0.0.1:7424"
	if got, err := n.NewLeafURLs(ctx, []string{a, b, c}); err != nil || len(got) != 3 {
		t.Fatalf("the first list: %d URLs, %v", len(got), err)
	}
	for _, order := range [][]string{{b, a, c}, {c, b, a}, {a, b, c}} {
		if got, err := n.NewLeafURLs(ctx, order); err != nil || got != nil {
			t.Fatalf("%v taken as new leaf URLs (%d URLs, %v): the same set in another order", order, len(got), err)
		}
	}
	if got, err := n.NewLeafURLs(ctx, []string{b, c}); err != nil || len(got) != 2 {
		t.Fatalf("a hub gone from the set: %d URLs, %v", len(got), err)
	}
}
