package sqlite

import (
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// hubTicket is one ticket event the hub recorded for an order.
type hubTicket struct {
	typ, loc string
	number   int64
}

// hubTickets reads the ticket events b recorded, by order, oldest first.
func hubTickets(t *testing.T, b *node) map[string][]hubTicket {
	t.Helper()
	out := map[string][]hubTicket{}
	for _, r := range dumpRows(t, b.db, `SELECT order_id, type, location_id, data FROM kds_events ORDER BY seq`) {
		var tk kassa.Ticket
		if err := json.Unmarshal([]byte(r[3].(string)), &tk); err != nil {
			t.Fatal(err)
		}
		id := r[0].(string)
		out[id] = append(out[id], hubTicket{typ: r[1].(string), loc: r[2].(string), number: tk.TicketNumber})
	}
	return out
}

// The hub records the kitchen tickets of a catch-up's orders a batch at a
// time (RecordDueTickets): within one batch, orders of two locations whose
// business days differ each get exactly one ticket.created, numbered 1, 2,
// … per location and day; a later batch, a day later, numbers the day's new
// orders from 1 again while an order of the day before that changed in the
// same batch gets ticket.updated under its old number.
func TestADueBatchNumbersEachLocationsDayAndUpdatesInTheSameBatch(t *testing.T) {
	edge, hub := mustNode(t), mustNode(t)
	w := seed(t, edge)
	far, err := NewLocationService(edge.db).CreateLocation(w.ctx, &kassa.LocationCreate{Name: "Islands", Timezone: "Pacific/Kiritimati"})
	if err != nil {
		t.Fatal(err)
	}
	west, err := NewLocationService(edge.db).CreateLocation(w.ctx, &kassa.LocationCreate{Name: "Baker", Timezone: "Etc/GMT+12"})
	if err != nil {
		t.Fatal(err)
	}
	var shift atomic.Int64 // the hub's clock, moved a day for the second batch
	hub.db.Now = func() time.Time { return time.Now().UTC().Add(time.Duration(shift.Load())) }
	order := func(loc string) string {
		o, err := edge.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		return o.ID
	}
	record := func() map[string][]hubTicket {
		t.Helper()
		syncPair(t, edge, hub)
		if n, err := hub.db.RecordDueTickets(w.ctx, 1000); err != nil || n == 0 {
			t.Fatalf("recorded %d due orders: %v", n, err)
		}
		return hubTickets(t, hub)
	}
	day1 := [][]string{{order(far.ID), order(far.ID), order(far.ID)}, {order(west.ID), order(west.ID), order(west.ID)}}
	got := record()
	checkDay(t, got, day1, nil)
	changed := day1[1][1]
	was := got[changed][0].number

	shift.Store(int64(24 * time.Hour))
	day2 := [][]string{{order(west.ID), order(west.ID)}, {order(far.ID), order(far.ID)}}
	if _, err := edge.orders.UpdateOrder(w.ctx, changed, &kassa.OrderUpdate{Notes: kassa.Some("no onions")}); err != nil {
		t.Fatal(err)
	}
	got = record()
	checkDay(t, got, day1, map[string]bool{changed: true})
	checkDay(t, got, day2, nil)
	if len(got) != 10 {
		t.Errorf("tickets of %d orders at the hub, want 10", len(got))
	}
	if n := got[changed][1].number; n != was {
		t.Errorf("the changed order's update is numbered %d, its ticket %d", n, was)
	}
}

// checkDay fails unless every order of each group (one location's orders
// of one business day) has exactly one ticket.created, followed by one
// ticket.updated for the orders of updated, and the group's tickets are
// numbered 1 to its size.
func checkDay(t *testing.T, got map[string][]hubTicket, groups [][]string, updated map[string]bool) {
	t.Helper()
	for _, ids := range groups {
		var numbers, want []int64
		for i, id := range ids {
			want = append(want, int64(i+1))
			types := []string{kassa.TicketCreated}
			if updated[id] {
				types = append(types, kassa.TicketUpdated)
			}
			var have []string
			for _, tk := range got[id] {
				have = append(have, tk.typ)
			}
			if !slices.Equal(have, types) {
				t.Errorf("order %s: ticket events %v, want %v", id, have, types)
			} else {
				numbers = append(numbers, got[id][0].number)
			}
		}
		slices.Sort(numbers)
		if !slices.Equal(numbers, want) {
			t.Errorf("a location's day numbered %v, want %v", numbers, want)
		}
	}
}
