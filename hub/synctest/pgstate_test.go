package synctest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"kassa.dev/shared/pgtest"
)

// logPGStateOnFailure has a failed test on PostgreSQL log what its
// database was doing as it failed (registered after the hubs start, so it
// runs before they stop): the transactions running on the server, with
// their ids and ages (a long one holds back the log's positions and the
// followed tables' marks: postgres.md), the log's commits still waiting
// for a position, and the newest marks. Three tests of the PostgreSQL
// line timed out now and then in whole runs and never alone (status.md,
// "Flakes seen"): this says which wait held them.
func logPGStateOnFailure(t testing.TB, dsn string) {
	if !strings.HasPrefix(dsn, "postgres") {
		return
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(pgState(dsn))
		}
	})
}

// pgState reads what logPGStateOnFailure logs.
func pgState(dsn string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "PostgreSQL state: " + err.Error()
	}
	defer conn.Close(ctx)
	var b strings.Builder
	b.WriteString("PostgreSQL state at the failure:\n")
	queries := []struct{ title, sql string }{
		{"transactions running", `SELECT pid, datname, application_name, state, backend_xid::text, backend_xmin::text,
			round(extract(epoch FROM now() - xact_start)::numeric, 3)::text AS xact_age_s, wait_event_type || ':' || wait_event,
			left(regexp_replace(query, '\s+', ' ', 'g'), 160) FROM pg_stat_activity
			WHERE xact_start IS NOT NULL AND pid <> pg_backend_pid() ORDER BY xact_start`},
		{"snapshot", `SELECT pg_current_snapshot()::text`},
		{"commits waiting for a position", `SELECT count(*)::text, coalesce(min(cseq), 0)::text, coalesce(max(cseq), 0)::text,
			coalesce(min(xid::text), '') FROM outbox_commits WHERE last_pos IS NULL`},
		{"last positioned commit", `SELECT cseq::text, xid::text, last_pos::text FROM outbox_commits WHERE last_pos IS NOT NULL ORDER BY last_pos DESC LIMIT 1`},
		{"newest marks", `SELECT tbl, upto::text, xid_bound::text FROM seq_marks ORDER BY xid_bound DESC, tbl LIMIT 12`},
	}
	for _, q := range queries {
		fmt.Fprintf(&b, "-- %s\n", q.title)
		rows, err := conn.Query(ctx, q.sql)
		if err != nil {
			fmt.Fprintf(&b, "   %v\n", err)
			continue
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				break
			}
			fmt.Fprintf(&b, "   %v\n", vals)
		}
		if err := rows.Err(); err != nil {
			fmt.Fprintf(&b, "   %v\n", err)
		}
		rows.Close()
	}
	return b.String()
}

// TestPGStateReadsTheLogsPositionsAndTheServersTransactions: what a
// failed PostgreSQL test logs names the log's waiting commits and a
// transaction left open.
func TestPGStateReadsTheLogsPositionsAndTheServersTransactions(t *testing.T) {
	if !pgtest.OnPostgres() {
		t.Skip("reads a hub's PostgreSQL: run with KASSA_TEST_STORE=postgres")
	}
	_, dsn := startHubsOnDatabase(t, 1)
	beginWriting(t, dsn)
	got := pgState(dsn)
	t.Log(got)
	for _, want := range []string{"commits waiting for a position", "last positioned commit", "SELECT pg_current_xact_id()"} {
		if !strings.Contains(got, want) {
			t.Errorf("the state does not name %q:\n%s", want, got)
		}
	}
}
