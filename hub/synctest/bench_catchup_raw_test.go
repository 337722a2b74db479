package synctest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"kassa.dev/shared/node"
	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

// The catch-up's baseline, measured in the same run as BenchmarkSync's
// catch-up: the backlog's change records (three per order: the order, its
// line, its order.created event, at the sizes an edge pushes them) carried
// from a leaf to its hub over NATS in batches of 500 (the link's batch),
// decoded at the hub into change records, and written there in one
// transaction per batch with WAL and synchronous=FULL: each record's row
// (into a plain table), its copy in the hub's log (outbox) and its
// applied_changes entry, into a store made by node.CreateStore (the
// hub's schema, indexes and triggers). No admission, no merge, no
// recompute, no events, no kitchen tickets: what a catch-up costs before
// Kassa's rules. Sizes are the averages of the records an edge pushed in
// BenchmarkSync on 2026-11-28, fixed so that the yardstick does not move
// with Kassa.
const (
	rawCatchUpBatch                               = 500
	rawOrderRecord, rawLineRecord, rawEventRecord = 645, 461, 2203
)

// rawCatchUp is the baseline's wall and CPU time for records change records.
func rawCatchUp(b *testing.B, records int) (time.Duration, time.Duration) {
	db := rawCatchUpStore(b)
	defer db.Close()
	lc, stop := rawLeafLink(b, "push", []byte("[]"), func(m *nats.Msg) {
		var batch []change.Change
		err := json.Unmarshal(m.Data, &batch)
		if err == nil {
			err = rawCatchUpWrite(db, batch)
		}
		if err != nil {
			m.Respond([]byte(err.Error()))
			return
		}
		m.Respond([]byte("ok"))
	})
	defer stop()
	batches := rawCatchUpBatches(records)
	start, cpu := time.Now(), processCPU()
	for _, p := range batches {
		reply, err := lc.Request("push", p, 30*time.Second)
		if err != nil || string(reply.Data) != "ok" {
			b.Fatalf("raw catch-up push: %v %s", err, reply.Data)
		}
	}
	return time.Since(start), processCPU() - cpu
}

// rawCatchUpStore is a hub store file with a plain table for the rows.
func rawCatchUpStore(b *testing.B) *sql.DB {
	path := filepath.Join(b.TempDir(), "rawcatchup.db")
	if err := node.CreateStore(context.Background(), path); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000&_journal_mode=WAL&_synchronous=FULL&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE raw_rows (id TEXT PRIMARY KEY, entity TEXT NOT NULL, fields TEXT NOT NULL, hlc TEXT NOT NULL, origin TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	return db
}

// rawCatchUpWrite writes one pushed batch in one transaction.
func rawCatchUpWrite(db *sql.DB, batch []change.Change) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := time.Now().UTC().Format(node.TimeFormat)
	for _, c := range batch {
		fields, _ := json.Marshal(c.Fields)
		if _, err := tx.Exec(`INSERT INTO raw_rows (id, entity, fields, hlc, origin) VALUES (?, ?, ?, ?, ?)`,
			c.EntityID, c.Entity, string(fields), c.HLC.String(), c.Origin); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO outbox (id, org_id, location_id, entity, entity_id, op, fields, hlc, origin, actor, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.ID, c.OrgID, c.LocationID, c.Entity, c.EntityID, string(c.Op), string(fields),
			c.HLC.String(), c.Origin, c.Actor, now); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO applied_changes (id, origin, applied_at, org_id, location_id, entity, entity_id, op)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, c.ID, c.Origin, now, c.OrgID, c.LocationID, c.Entity, c.EntityID, string(c.Op)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// rawCatchUpBatches encodes records change records of orders, their lines
// and their events, in pushes of rawCatchUpBatch.
func rawCatchUpBatches(records int) [][]byte {
	id := func(n int) string { return fmt.Sprintf("019a0000-0000-7000-8000-%012d", n) }
	org, loc, node := id(0), id(1), id(2)
	pad := func(n int) string { return strings.Repeat("x", n) }
	var out [][]byte
	var batch []change.Change
	for i := range records {
		entity, size := "order", rawOrderRecord
		switch i % 3 {
		case 1:
			entity, size = "order_line", rawLineRecord
		case 2:
			entity, size = "event", rawEventRecord
		}
		batch = append(batch, change.Change{ID: id(3 + 2*i), OrgID: org, LocationID: loc, Entity: entity, EntityID: id(4 + 2*i),
			Op: change.OpInsert, Fields: map[string]any{"data": pad(size)}, HLC: hlc.Timestamp{Wall: int64(i + 1)}, Origin: node, Actor: org})
		if len(batch) == rawCatchUpBatch || i == records-1 {
			p, _ := json.Marshal(batch)
			out = append(out, p)
			batch = nil
		}
	}
	return out
}

// printCatchUp prints the catch-up beside its baseline.
func printCatchUp(backlog int, wall, cpu, rawWall, rawCPU time.Duration, campaigns int) {
	records := backlog * 3
	perRecord := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(records) }
	fmt.Printf("Catch-up: %d orders made offline (%d change records), %d active campaigns; target <= 3 s\n", backlog, records, campaigns)
	fmt.Printf("| %-52s | %9s | %9s | %12s |\n", "run", "wall s", "CPU s", "CPU µs/rec")
	fmt.Printf("|%s|%s|%s|%s|\n", dashes(54), dashes(11), dashes(11), dashes(14))
	fmt.Printf("| %-52s | %9.2f | %9.2f | %12.1f |\n", "raw: leaf link + 3 rows per record, no rules", rawWall.Seconds(), rawCPU.Seconds(), perRecord(rawCPU))
	fmt.Printf("| %-52s | %9.2f | %9.2f | %12.1f |\n", "Kassa: at the hub after reconnect (edge and hub CPU)", wall.Seconds(), cpu.Seconds(), perRecord(cpu))
	fmt.Printf("Kassa at %.1fx the baseline's CPU per record\n\n", cpu.Seconds()/rawCPU.Seconds())
}
