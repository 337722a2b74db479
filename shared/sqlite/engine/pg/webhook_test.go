package pg_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite"
	"kassa.dev/shared/sqlite/engine/pg"
)

// hubPools are n hubs' pools on one fresh database with the backend's and
// the nouns' schema.
func hubPools(t *testing.T, n int) []*pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.Start(t).Database(t)
	pools := make([]*pgxpool.Pool, n)
	for i := range pools {
		pool, err := pgxpool.New(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		if err := pg.Migrate(ctx, pool, sqlite.PostgresMigrations); err != nil {
			t.Fatal(err)
		}
		pools[i] = pool
	}
	return pools
}

const webhookLease = time.Minute

// sendAll is one hub's sender: it claims, sends (counts in sent) and
// records each delivery until nothing is left to claim.
func sendAll(ctx context.Context, pool *pgxpool.Pool, hub string, now time.Time, sent map[string][]string, mu *sync.Mutex) error {
	for {
		ds, err := pg.ClaimDeliveries(ctx, pool, "ep_active", now, webhookLease, 7)
		if err != nil || len(ds) == 0 {
			return err
		}
		ids := make([]string, len(ds))
		for i, d := range ds {
			mu.Lock()
			sent[d.ID] = append(sent[d.ID], hub)
			mu.Unlock()
			if _, err := pool.Exec(ctx, `UPDATE webhook_deliveries SET status = 'delivered', attempts = attempts + 1 WHERE id = $1 AND attempts = $2`, d.ID, d.Attempts); err != nil {
				return err
			}
			ids[i] = d.ID
		}
		if err := pg.ReleaseDeliveries(ctx, pool, ids); err != nil {
			return err
		}
	}
}

// Two hubs send one queue of webhooks at once: every due delivery of an
// active endpoint is sent, each by one hub, once; a delivery not due yet
// and an inactive endpoint's are not sent. A hub that claims a delivery
// and dies holds it only until its lease ends; then the other hub sends it.
func TestEachDueWebhookIsSentByOneHubAndADeadHubsClaimExpires(t *testing.T) {
	ctx := context.Background()
	hubs := hubPools(t, 2)
	now := time.Now().UTC()
	db := hubs[0]
	if _, err := db.Exec(ctx, `INSERT INTO webhook_endpoints (id, org_id, url, events, status, secret, created_at, updated_at) VALUES
		('ep_active', 'org_a', 'https://a.example/hook', '["*"]', 'active', 's', '', ''),
		('ep_off', 'org_a', 'https://b.example/hook', '["*"]', 'inactive', 's', '', '')`); err != nil {
		t.Fatal(err)
	}
	const due = 120
	insert := `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, event_type, body, status, next_attempt_at, created_at, updated_at)
		VALUES ($1, 'org_a', $2, $1, 'order.completed', '\x7b7d', $3, $4, '', '')`
	past, later := now.Add(-time.Second).Format("2006-01-02T15:04:05.000Z"), now.Add(time.Hour).Format("2006-01-02T15:04:05.000Z")
	for i := range due {
		if _, err := db.Exec(ctx, insert, fmt.Sprintf("d%03d", i), "ep_active", []string{"pending", "awaiting_retry"}[i%2], past); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range [][3]string{{"later", "ep_active", later}, {"off", "ep_off", past}} {
		if _, err := db.Exec(ctx, insert, d[0], d[1], "pending", d[2]); err != nil {
			t.Fatal(err)
		}
	}

	sent := map[string][]string{}
	var mu sync.Mutex
	errs := make(chan error, len(hubs))
	for i, pool := range hubs {
		go func() { errs <- sendAll(ctx, pool, fmt.Sprintf("hub%d", i+1), now, sent, &mu) }()
	}
	for range hubs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if len(sent) != due {
		t.Fatalf("%d deliveries sent, want the %d due ones", len(sent), due)
	}
	for id, by := range sent {
		if len(by) != 1 {
			t.Errorf("delivery %s sent %d times (by %v), want once", id, len(by), by)
		}
		if id == "later" || id == "off" {
			t.Errorf("delivery %s sent: it is not due, or its endpoint is inactive", id)
		}
	}

	// hub1 claims a delivery now due and dies before sending it.
	if _, err := db.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = $1 WHERE id = 'later'`, past); err != nil {
		t.Fatal(err)
	}
	if ds, err := pg.ClaimDeliveries(ctx, hubs[0], "ep_active", now, webhookLease, 10); err != nil || len(ds) != 1 || ds[0].ID != "later" || ds[0].URL != "https://a.example/hook" {
		t.Fatalf("hub1's claim: %+v, %v; want the delivery 'later' with its endpoint", ds, err)
	}
	if ds, err := pg.ClaimDeliveries(ctx, hubs[1], "ep_active", now, webhookLease, 10); err != nil || len(ds) != 0 {
		t.Fatalf("hub2 claims %+v (%v) while hub1's lease runs; want nothing", ds, err)
	}
	if _, err := db.Exec(ctx, `UPDATE webhook_deliveries SET claimed_until = claimed_until - $1::interval WHERE id = 'later'`, webhookLease); err != nil {
		t.Fatal(err)
	}
	ds, err := pg.ClaimDeliveries(ctx, hubs[1], "ep_active", now, webhookLease, 10)
	if err != nil || len(ds) != 1 || ds[0].ID != "later" {
		t.Fatalf("hub2's claim after hub1's lease ended: %+v, %v; want the delivery 'later'", ds, err)
	}
	if left := time.Until(ds[0].ClaimedUntil); left <= 0 || left > webhookLease {
		t.Fatalf("hub2's lease ends in %s, want within %s", left, webhookLease)
	}
}
