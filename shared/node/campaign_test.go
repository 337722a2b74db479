package node_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	_ "kassa.dev/shared/node/hubonly" // the PostgreSQL backend
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
	"kassa.dev/sync/wait"
)

// TestMain runs the package's tests and then stops its throwaway
// PostgreSQL, if KASSA_TEST_STORE=postgres started one (pgtest.HubStore).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestTheHubPrunesCampaignVersionsPastTheRetentionAtStart: a campaign
// made, launched and paused leaves three versions at the hub. Reopened 89
// days later, the hub prunes none (the default retention is 90 days);
// reopened 91 days later, its retention job prunes at start the two
// older than 90 days but the campaign's state then, and logs how many.
func TestTheHubPrunesCampaignVersionsPastTheRetentionAtStart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Now().UTC()
	store := pgtest.HubStore(t) // the same database at each reopening
	open := func(days int, log *slog.Logger) *node.Node {
		t.Helper()
		now := t0.Add(time.Duration(days) * 24 * time.Hour)
		n, err := node.Open(ctx, node.Config{Kind: kassa.NodeHub, DataDir: dir, Store: store, Config: httpapi.Config{Now: func() time.Time { return now }}}, log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Shutdown(ctx) })
		return n
	}
	n := open(0, slog.New(slog.DiscardHandler))
	orgID, err := demo.Seed(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	owner, loc, err := demo.OwnerAndLocation(ctx, n, orgID)
	if err != nil {
		t.Fatal(err)
	}
	actx := node.Actor(ctx, owner)
	campaigns := n.Services.Campaigns
	c, err := campaigns.CreateCampaign(actx, &kassa.CampaignCreate{Name: "Happy hour", Type: kassa.CampaignDiscount, LocationIDs: []string{loc},
		Rules: []kassa.CampaignRule{{Type: kassa.RuleOrderDiscount, DiscountType: kassa.DiscountPercent, Value: 1000}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := campaigns.LaunchCampaign(actx, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := campaigns.UpdateCampaign(actx, c.ID, &kassa.CampaignUpdate{Status: kassa.Some(kassa.CampaignPaused)}); err != nil {
		t.Fatal(err)
	}
	if err := n.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	n = open(89, slog.New(slog.DiscardHandler))
	if k, err := n.PruneCampaignVersions(ctx); err != nil || k != 0 {
		t.Fatalf("at 89 days: pruned %d, %v", k, err)
	}
	if err := n.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	logs := &nodetest.SyncBuffer{}
	open(91, slog.New(slog.NewJSONHandler(logs, nil)))
	wait.For(t, 10*time.Second, "the start-up pruning of two versions", func() bool {
		return strings.Contains(logs.String(), `"msg":"swept old campaign versions","rows":2`)
	})
}
