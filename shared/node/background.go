package node

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ticketBatch is how many orders' kitchen tickets one unit of work records.
const ticketBatch = 200

// ticketLinger is how long the ticket job lets a burst of synced orders
// gather after the first wakes it: at a hub's ingest the job ran for a
// handful of orders at a time, each run a unit and a dozen round trips,
// and several hubs' runs contended for one ticket counter. A kitchen does
// not see 20 ms.
const ticketLinger = 20 * time.Millisecond

// TicketJob records the kitchen tickets of orders that sync changed (the
// store marks them due after each apply), so that orders taken or bumped
// elsewhere reach this node's screens. At start it sweeps the orders of the
// last day that have no ticket (their work was lost in a crash); when it
// stops it records what is still due, so a clean shutdown loses none.
// Open starts it first, so it stops last: after the sync link that feeds it.
func (n *Node) TicketJob() Job {
	db, log := n.db, n.log
	drain := func(ctx context.Context) {
		for {
			k, err := db.RecordDueTickets(ctx, ticketBatch)
			if err != nil {
				log.Error("recording kitchen tickets of synced orders", slog.Any("err", err))
			}
			if k < ticketBatch {
				return
			}
		}
	}
	return Job{Name: "kitchen-tickets", Run: func(ctx context.Context) error {
		if err := db.SweepTickets(ctx); err != nil {
			return err
		}
		for {
			select {
			case <-ctx.Done():
				drain(context.WithoutCancel(ctx))
				return nil
			case <-db.TicketsDue():
				linger(ctx, ticketLinger)
				drain(context.WithoutCancel(ctx))
			}
		}
	}}
}

// linger waits d, or until ctx is done.
func linger(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// forwardEvery is how often the edge looks for offline card payments to
// forward while its link is up.
const forwardEvery = 2 * time.Second

// ForwardOfflineJob sends card payments taken while the node had no uplink
// to the card network, up to 100 every forwardEvery while online() holds.
func (n *Node) ForwardOfflineJob(online func() bool) Job {
	payments, log := n.payments, n.log
	return Job{Name: "offline-card-forwarding", Run: func(ctx context.Context) error {
		t := time.NewTicker(forwardEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
			if !online() {
				continue
			}
			if k, err := payments.ForwardOffline(ctx, 100); err != nil {
				log.Warn("forwarding offline card payments", "err", err)
			} else if k > 0 {
				log.Info("forwarded offline card payments", "count", k)
			}
		}
	}}
}

// DefaultCampaignVersionRetention is how long the hub keeps campaigns'
// past versions unless --campaign-version-retention says otherwise: an
// edge order dated earlier is priced with its campaigns as they stood then
// (docs/campaigns.md).
const DefaultCampaignVersionRetention = 90 * 24 * time.Hour

// campaignVersionRetentionEvery is how often the hub prunes campaign
// versions.
const campaignVersionRetentionEvery = time.Hour

// PruneCampaignVersions deletes the campaign versions older than the
// retention by the node's clock but each campaign's state then, and
// returns how many (the retention job's step; tests call it after moving
// the clock).
func (n *Node) PruneCampaignVersions(ctx context.Context) (int64, error) {
	return n.db.PruneCampaignVersions(ctx, n.retainedSince(n.Config.CampaignVersionRetention, DefaultCampaignVersionRetention))
}

// CampaignVersionRetentionJob prunes, at start and then hourly, the
// campaign versions past the retention, so that the table the hub prices
// edge orders from, which gains a row per campaign write, stays bounded.
// The hub runs it.
func (n *Node) CampaignVersionRetentionJob() Job {
	return n.sweepJob("campaign-version-retention", campaignVersionRetentionEvery, "old campaign versions", n.PruneCampaignVersions)
}

// retainedSince is the instant before which a retention of keep (0 or
// less: def) ends, by the node's clock.
func (n *Node) retainedSince(keep, def time.Duration) time.Time {
	if keep <= 0 {
		keep = def
	}
	return n.Config.Now().Add(-keep)
}

// sweepJob runs sweep at start and then every period; it logs how many
// rows of what it deleted, and its errors (the next round tries again).
// Hubs sharing a database run each tick (the period's start) once across
// them (Config.Once).
func (n *Node) sweepJob(name string, every time.Duration, what string, sweep func(context.Context) (int64, error)) Job {
	log := n.log
	return Job{Name: name, Run: func(ctx context.Context) error {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if k, err := n.tick(ctx, name, every, sweep); err != nil && ctx.Err() == nil {
				log.Warn("sweeping "+what, "err", err)
			} else if k > 0 {
				log.Info("swept "+what, "rows", k)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
	}}
}

// tick runs job's tick of now (the start of its period): here, or once
// across the hubs through Config.Once; kassa_job_ticks_total counts it.
func (n *Node) tick(ctx context.Context, job string, every time.Duration, run func(context.Context) (int64, error)) (int64, error) {
	if n.Config.Once == nil {
		n.ticks.WithLabelValues(job, "here").Inc()
		return run(ctx)
	}
	k, here, err := n.Config.Once(ctx, job, n.Config.Now().Truncate(every), run)
	if err == nil {
		n.ticks.WithLabelValues(job, map[bool]string{true: "here", false: "elsewhere"}[here]).Inc()
	}
	return k, err
}

// newTickCounter is kassa_job_ticks_total (docs/ops.md).
func newTickCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kassa_job_ticks_total",
		Help: "Ticks of the node's periodic jobs (sweeps, retention), by job and where they ran: here, or elsewhere (another hub on the same database ran it)."},
		[]string{"job", "ran"})
}
