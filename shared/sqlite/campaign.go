package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
)

// CampaignService implements kassa.CampaignService. Campaigns are
// org-wide and made at the hub: an enrolled edge refuses its own writes
// (writeRow: no edge rule) and the hub refuses an edge's (trust.go); they
// reach the edges by sync.
type CampaignService struct{ db *DB }

// NewCampaignService returns the campaign service of db.
func NewCampaignService(db *DB) *CampaignService { return &CampaignService{db: db} }

var _ kassa.CampaignService = (*CampaignService)(nil)

const campaignCols = `SELECT id, org_id, name, type, status, rules, voucher_code, usage_limit, per_customer_limit,
	starts_at, ends_at, schedule, location_ids, created_at, updated_at FROM campaigns`

func scanCampaign(s scanner) (*kassa.Campaign, error) {
	var c kassa.Campaign
	var rules, schedule, locations, created, updated string
	var voucher sql.Null[string]
	var starts, ends sql.NullString
	var usage, perCustomer sql.Null[int64]
	if err := s.Scan(&c.ID, &c.OrgID, &c.Name, &c.Type, &c.Status, &rules, &voucher, &usage, &perCustomer,
		&starts, &ends, &schedule, &locations, &created, &updated); err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = parseTime(created), parseTime(updated)
	c.VoucherCode = nullPtr(voucher)
	c.UsageLimit, c.PerCustomerLimit = nullPtr(usage), nullPtr(perCustomer)
	c.StartsAt, c.EndsAt = nullTime(starts), nullTime(ends)
	c.Rules, c.LocationIDs = []kassa.CampaignRule{}, []string{}
	err := errors.Join(decodeJSON(rules, &c.Rules), decodeJSON(locations, &c.LocationIDs), decodeJSON(schedule, &c.Schedule))
	c.Schedule.DaysOfWeek = orEmpty(c.Schedule.DaysOfWeek)
	return &c, err
}

func campaignID(c *kassa.Campaign) string { return c.ID }

// findCampaign reads a campaign as stored (its stored status).
func findCampaign(ctx context.Context, q querier, orgID, id string) (*kassa.Campaign, error) {
	return findByID(ctx, q, campaignCols, "campaign", orgID, id, scanCampaign)
}

// shown is a campaign as the API shows it: with its status at now.
func (s *CampaignService) shown(c *kassa.Campaign) *kassa.Campaign {
	c.Status = kassa.EffectiveCampaignStatus(c, s.db.Now())
	return c
}

// findShown reads a campaign as the API shows it (the data of its events).
func (s *CampaignService) findShown(ctx context.Context, q querier, orgID, id string) (*kassa.Campaign, error) {
	c, err := findCampaign(ctx, q, orgID, id)
	if err != nil {
		return nil, err
	}
	return s.shown(c), nil
}

// campaignEvent names the event of a PATCH by what it changed: a move to
// paused or ended is that event, anything else campaign.updated.
func campaignEvent(cols map[string]any) string {
	switch cols["status"] {
	case kassa.CampaignPaused:
		return kassa.EventCampaignPaused
	case kassa.CampaignEnded:
		return kassa.EventCampaignEnded
	}
	return kassa.EventCampaignUpdated
}

// effectiveStatusSQL is kassa.EffectiveCampaignStatus as SQL, for the
// list's status filter (two arguments: now, now; stored times are fixed
// width, so text order is time order). TestCampaignListFiltersByStatus
// holds the two together.
const effectiveStatusSQL = `CASE
	WHEN status IN ('scheduled', 'active', 'paused') AND ends_at IS NOT NULL AND ends_at <= ? THEN 'ended'
	WHEN status = 'scheduled' AND (starts_at IS NULL OR starts_at <= ?) THEN 'active'
	ELSE status END`

// FindCampaigns lists the org's campaigns by id, of f.Status (effective)
// when given.
func (s *CampaignService) FindCampaigns(ctx context.Context, f kassa.CampaignFilter) (kassa.List[kassa.Campaign], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Campaign]{}, err
	}
	w := orgFilter(a.OrgID)
	if f.Status != "" {
		now := fmtTime(s.db.Now())
		w.and(effectiveStatusSQL+" = ?", now, now, f.Status)
	}
	l, err := findPage(ctx, s.db.Reader, campaignCols, w, f.Page, scanCampaign, campaignID)
	for i := range l.Items {
		s.shown(&l.Items[i])
	}
	return l, err
}

// FindCampaignByID returns one campaign of the org, or ENotFound.
func (s *CampaignService) FindCampaignByID(ctx context.Context, id string) (*kassa.Campaign, error) {
	c, err := readOwn(ctx, s.db, findCampaign, id)
	if err != nil {
		return nil, err
	}
	return s.shown(c), nil
}

// campaignColumns are the stored columns of a campaign's editable fields.
func campaignColumns(in *kassa.CampaignCreate) map[string]any {
	schedule := kassa.CampaignSchedule{}
	if in.Schedule != nil {
		schedule = *in.Schedule
		schedule.DaysOfWeek = orEmpty(schedule.DaysOfWeek)
	}
	return map[string]any{
		"name": in.Name, "type": in.Type, "rules": in.Rules, "voucher_code": in.VoucherCode,
		"usage_limit": in.UsageLimit, "per_customer_limit": in.PerCustomerLimit,
		"starts_at": in.StartsAt, "ends_at": in.EndsAt, "schedule": schedule, "location_ids": dedupe(in.LocationIDs),
	}
}

// campaignInput is a stored campaign as the input that would make it.
func campaignInput(c *kassa.Campaign) kassa.CampaignCreate {
	schedule := c.Schedule
	return kassa.CampaignCreate{Name: c.Name, Type: c.Type, Rules: c.Rules, VoucherCode: c.VoucherCode,
		UsageLimit: c.UsageLimit, PerCustomerLimit: c.PerCustomerLimit, StartsAt: c.StartsAt, EndsAt: c.EndsAt,
		Schedule: &schedule, LocationIDs: c.LocationIDs}
}

// normalizeCampaign puts a campaign input in its stored form: times to the
// millisecond, the voucher code in upper case.
func normalizeCampaign(in *kassa.CampaignCreate) {
	in.StartsAt, in.EndsAt = truncMilli(in.StartsAt), truncMilli(in.EndsAt)
	if in.VoucherCode != nil {
		code := kassa.NormalizeVoucher(*in.VoucherCode)
		in.VoucherCode = &code
	}
	in.LocationIDs = dedupe(in.LocationIDs)
}

// CreateCampaign validates and stores a new draft. Errors: EInvalid (also
// for locations, products or categories not in the org, or a voucher code
// another live campaign of the org has), EConflict at an enrolled edge.
func (s *CampaignService) CreateCampaign(ctx context.Context, in *kassa.CampaignCreate) (*kassa.Campaign, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	v := *in
	normalizeCampaign(&v)
	if err := v.Validate(); err != nil {
		return nil, err
	}
	id := s.db.NewID()
	var out *kassa.Campaign
	err = s.db.Write(ctx, func(tx *Tx) error {
		if err := checkCampaignRefs(ctx, tx, a.OrgID, id, &v); err != nil {
			return err
		}
		cols := campaignColumns(&v)
		cols["status"] = kassa.CampaignDraft
		if err := tx.Insert(ctx, entCampaign, a.OrgID, id, cols); err != nil {
			return err
		}
		return emitRead(ctx, tx, s.findShown, a.OrgID, id, kassa.EventCampaignCreated, &out)
	})
	return out, err
}

// UpdateCampaign applies a partial update: a status move by
// kassa.CampaignTransition, and field changes as kassa.CampaignEditable
// allows in the status before or after the move (pause a running campaign
// to change its rules). The merged campaign must be valid as a whole.
// Errors: ENotFound, EInvalid, EConflict.
func (s *CampaignService) UpdateCampaign(ctx context.Context, id string, in *kassa.CampaignUpdate) (*kassa.Campaign, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.ValidateFields(); err != nil {
		return nil, err
	}
	e := campaignEdit{orgID: a.OrgID, id: id, in: in}
	return updateEmitAs(ctx, s.db, entCampaign, campaignEvent, findCampaign, s.findShown, a.OrgID, id,
		func(tx *Tx, old *kassa.Campaign, cols map[string]any) error { return e.diff(ctx, tx, old, cols) })
}

// campaignEdit is an update of campaign id of org.
type campaignEdit struct {
	orgID, id string
	in        *kassa.CampaignUpdate
}

// diff notes in cols what the update changes of old, after checking that
// the campaign's status allows it and that the result is a valid campaign.
func (e campaignEdit) diff(ctx context.Context, tx *Tx, old *kassa.Campaign, cols map[string]any) error {
	before := kassa.EffectiveCampaignStatus(old, tx.Now)
	after := before
	if e.in.Status.Set {
		var err error
		if after, err = kassa.CampaignTransition(old, e.in.Status.Value, tx.Now); err != nil {
			return err
		}
	}
	if err := e.editable(before, after); err != nil {
		return err
	}
	was := campaignInput(old)
	merged := e.merged(old)
	if err := merged.Validate(); err != nil {
		return err
	}
	if err := checkCampaignRefs(ctx, tx, e.orgID, e.id, &merged); err != nil {
		return err
	}
	now := campaignColumns(&merged)
	stored := campaignColumns(&was)
	for k, v := range now {
		changed(cols, k, stored[k], v)
	}
	if after != old.Status {
		cols["status"] = after
	}
	return nil
}

// editable refuses a change of a field the campaign's status before and
// after the update both keep fixed.
func (e campaignEdit) editable(before, after string) error {
	in := e.in
	for _, f := range []struct {
		name string
		set  bool
	}{{"type", in.Type.Set}, {"rules", in.Rules.Set}, {"voucher_code", in.VoucherCode.Set}, {"usage_limit", in.UsageLimit.Set},
		{"per_customer_limit", in.PerCustomerLimit.Set}, {"starts_at", in.StartsAt.Set}, {"ends_at", in.EndsAt.Set},
		{"schedule", in.Schedule.Set}, {"location_ids", in.LocationIDs.Set}} {
		if f.set && !kassa.CampaignEditable(before, f.name) && !kassa.CampaignEditable(after, f.name) {
			return kassa.Errorf(kassa.EConflict, "%s cannot change while the campaign is %s: pause it first", f.name, before)
		}
	}
	return nil
}

// merged is old with the update's fields set, normalized.
func (e campaignEdit) merged(old *kassa.Campaign) kassa.CampaignCreate {
	in := e.in
	merged := campaignInput(old)
	in.Name.To(&merged.Name)
	in.Type.To(&merged.Type)
	in.Rules.To(&merged.Rules)
	takeAs(&merged.LocationIDs, in.LocationIDs, dedupe)
	if in.Schedule.Set {
		merged.Schedule = &in.Schedule.Value
	}
	for _, o := range []struct {
		opt kassa.Opt[int64]
		dst **int64
	}{{in.UsageLimit, &merged.UsageLimit}, {in.PerCustomerLimit, &merged.PerCustomerLimit}} {
		if o.opt.Set {
			*o.dst = optPtr(o.opt)
		}
	}
	if in.VoucherCode.Set {
		merged.VoucherCode = optPtr(in.VoucherCode)
	}
	if in.StartsAt.Set {
		merged.StartsAt = optPtr(in.StartsAt)
	}
	if in.EndsAt.Set {
		merged.EndsAt = optPtr(in.EndsAt)
	}
	normalizeCampaign(&merged)
	return merged
}

// LaunchCampaign moves a draft to scheduled or active
// (kassa.LaunchStatus). Errors: ENotFound, EConflict.
func (s *CampaignService) LaunchCampaign(ctx context.Context, id string) (*kassa.Campaign, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	launched := func(map[string]any) string { return kassa.EventCampaignLaunched }
	return updateEmitAs(ctx, s.db, entCampaign, launched, findCampaign, s.findShown, a.OrgID, id, func(tx *Tx, old *kassa.Campaign, cols map[string]any) error {
		status, err := kassa.LaunchStatus(old, tx.Now)
		cols["status"] = status
		return err
	})
}

// checkCampaignRefs checks that the campaign's locations, products and
// categories are the org's, and that no other campaign of the org that is
// not ended holds its voucher code.
func checkCampaignRefs(ctx context.Context, q querier, orgID, id string, in *kassa.CampaignCreate) error {
	if err := checkExist(ctx, q, "locations", orgID, "location_ids", "no such location: %s", in.LocationIDs); err != nil {
		return err
	}
	for _, r := range in.Rules {
		if err := checkExist(ctx, q, "products", orgID, "rules", "no such product: %s", r.ProductIDs); err != nil {
			return err
		}
		if err := checkExist(ctx, q, "categories", orgID, "rules", "no such category: %s", r.CategoryIDs); err != nil {
			return err
		}
	}
	if in.VoucherCode == nil {
		return nil
	}
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM campaigns WHERE org_id = ? AND voucher_code = ? AND id <> ? AND status <> ?`,
		orgID, *in.VoucherCode, id, kassa.CampaignEnded).Scan(&n)
	if err == nil && n > 0 {
		return kassa.InvalidField("voucher_code", "another campaign uses this code")
	}
	return err
}

// CampaignStats sums the campaign's redemptions: totals, per UTC day and
// per location; a campaign without any answers zeros. Errors: ENotFound.
func (s *CampaignService) CampaignStats(ctx context.Context, id string) (*kassa.CampaignStats, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := findCampaign(ctx, s.db.Reader, a.OrgID, id); err != nil {
		return nil, err
	}
	out := &kassa.CampaignStats{CampaignID: id, ByDay: []kassa.CampaignStatsPart{}, ByLocation: []kassa.CampaignStatsPart{}}
	if err := s.db.Reader.QueryRowContext(ctx, `SELECT currency FROM orgs WHERE id = ?`, a.OrgID).Scan(&out.Currency); err != nil {
		return nil, err
	}
	// Refunds count against the sale they refund (its redemption's day
	// and location): refunded_total of the order, as this node has it. At
	// the hub an edge's redemption has the amounts the hub computed
	// (redeemAtHub), not the ones it was sent. One row per order and
	// campaign: the orders are the rows.
	const sums = `count(*), coalesce(sum(r.amount), 0), coalesce(sum(r.order_total), 0), coalesce(sum(o.refunded_total), 0)
		FROM campaign_redemptions r LEFT JOIN orders o ON o.id = r.order_id AND o.org_id = r.org_id
		WHERE r.org_id = ? AND r.campaign_id = ?`
	err = s.db.Reader.QueryRowContext(ctx, `SELECT count(*), `+sums, a.OrgID, id).
		Scan(&out.Orders, &out.Redemptions, &out.DiscountGiven, &out.Revenue, &out.Refunded)
	if err != nil {
		return nil, err
	}
	out.NetRevenue = out.Revenue - out.Refunded
	for _, g := range []struct {
		key string
		dst *[]kassa.CampaignStatsPart
	}{{"substr(r.occurred_at, 1, 10)", &out.ByDay}, {"r.location_id", &out.ByLocation}} {
		rows, err := s.db.Reader.QueryContext(ctx, `SELECT `+g.key+` AS k, `+sums+` GROUP BY k ORDER BY k`, a.OrgID, id)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var p kassa.CampaignStatsPart
			if err := rows.Scan(&p.Key, &p.Redemptions, &p.DiscountGiven, &p.Revenue, &p.Refunded); err != nil {
				rows.Close()
				return nil, err
			}
			p.NetRevenue = p.Revenue - p.Refunded
			*g.dst = append(*g.dst, p)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// zones caches time zones by name: loading one reads the zone database.
var zones sync.Map // name → *time.Location

func zone(name string) *time.Location {
	if z, ok := zones.Load(name); ok {
		return z.(*time.Location)
	}
	z, err := time.LoadLocation(name)
	if err != nil {
		z = time.UTC // locations are validated: only a zone database without it
	}
	zones.Store(name, z)
	return z
}

// campaignCache holds each org's live (scheduled or active) campaigns as
// read from the store, for pricing: every order would otherwise read and
// decode them all. A write or apply of an org's campaign bumps that org's
// generation after its commit (other orgs' stay cached); a read takes the
// generation before it queries and stores its rows under it, so rows read
// before a commit never outlive it.
type campaignCache struct {
	orgs  sync.Map     // org id → *orgCampaigns
	reads atomic.Int64 // live campaigns read from the store (tests)
}

type orgCampaigns struct {
	gen    atomic.Uint64
	cached atomic.Pointer[cachedCampaigns]
}

type cachedCampaigns struct {
	gen  uint64
	live []kassa.Campaign // shared: never modified
}

func (c *campaignCache) of(orgID string) *orgCampaigns {
	if v, ok := c.orgs.Load(orgID); ok {
		return v.(*orgCampaigns)
	}
	v, _ := c.orgs.LoadOrStore(orgID, &orgCampaigns{})
	return v.(*orgCampaigns)
}

// gen is orgID's generation, to read before the snapshot that
// liveCampaigns reads on.
func (c *campaignCache) gen(orgID string) uint64 { return c.of(orgID).gen.Load() }

func (c *campaignCache) invalidate(orgIDs ...string) {
	for _, id := range orgIDs {
		c.of(id).gen.Add(1)
	}
}

// liveCampaigns returns the org's scheduled and active campaigns, from the
// cache when it is current, else read on q — a read transaction the caller
// began after it read gen from campaignsIn(db).live.gen(orgID), so that what q
// reads is at least as new as gen says (q is the caller's snapshot: a
// second reader could wait on a pool of one). The slice is shared: never
// modify it.
func (db *DB) liveCampaigns(ctx context.Context, q querier, gen uint64, orgID string) ([]kassa.Campaign, error) {
	oc := campaignsIn(db).live.of(orgID)
	if c := oc.cached.Load(); c != nil && c.gen == gen {
		return c.live, nil
	}
	live, err := loadLiveCampaigns(ctx, q, orgID)
	if err != nil {
		return nil, err
	}
	campaignsIn(db).live.reads.Add(1)
	oc.cached.Store(&cachedCampaigns{gen: gen, live: live})
	return live, nil
}

// loadLiveCampaigns reads the org's scheduled and active campaigns on q.
func loadLiveCampaigns(ctx context.Context, q querier, orgID string) ([]kassa.Campaign, error) {
	rows, err := q.QueryContext(ctx, campaignCols+` WHERE org_id = ? AND status IN (?, ?)`, orgID, kassa.CampaignScheduled, kassa.CampaignActive)
	if err != nil {
		return nil, err
	}
	var live []kassa.Campaign
	for rows.Next() {
		c, err := scanCampaign(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		live = append(live, *c)
	}
	return live, errors.Join(rows.Err(), rows.Close())
}

// campaignVersionSQL records a campaign's row as it now stands as its
// version from ?1 (three arguments: valid_from, id, org id). The state is
// the API's fields, as migration 0018 seeds them.
func campaignVersionSQL(d engine.Dialect) string {
	return `INSERT INTO campaign_versions (org_id, campaign_id, valid_from, state)
	SELECT org_id, id, ?1, ` + d.JSONObject(`'id', id, 'org_id', org_id, 'name', name, 'type', type, 'status', status`,
		`'rules', `+d.JSON("rules")+`, 'voucher_code', voucher_code, 'usage_limit', usage_limit, 'per_customer_limit', per_customer_limit`,
		`'starts_at', starts_at, 'ends_at', ends_at, 'schedule', `+d.JSON("schedule")+`, 'location_ids', `+d.JSON("location_ids"),
		`'created_at', created_at, 'updated_at', updated_at`) + `
	FROM campaigns WHERE id = ?2 AND org_id = ?3`
}

// recordCampaignVersion keeps, in the unit that wrote campaign id, its new
// state in the node-local campaign_versions (campaignsAt), valid from the
// unit's time.
func recordCampaignVersion(ctx context.Context, tx *Tx, orgID, id string) error {
	_, err := tx.ExecCached(ctx, campaignVersionSQL(engine.D(tx)), fmtTime(tx.Now), id, orgID)
	return err
}

// campaignVersionSweepBatch is how many versions one unit of
// PruneCampaignVersions deletes, so that the single writer is never held
// long.
const campaignVersionSweepBatch = 5000

// PruneCampaignVersions deletes the campaign versions valid from before
// cutoff except, per campaign, the newest valid at cutoff, and returns how
// many it deleted. For any instant from cutoff on, campaignsAt answers as
// before; for an earlier one it gives each campaign as it stood at cutoff
// (docs/campaigns.md, "Sync and trust"). The orgs' histories are
// forgotten. The hub's retention job runs it.
func (db *DB) PruneCampaignVersions(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for {
		var n int64
		err := db.Write(ctx, func(tx *Tx) error {
			rows, err := tx.QueryContext(ctx, `DELETE FROM campaign_versions WHERE id IN (SELECT v.id FROM campaign_versions v
				WHERE v.valid_from < ?1 AND EXISTS (SELECT 1 FROM campaign_versions w
					WHERE w.org_id = v.org_id AND w.campaign_id = v.campaign_id AND w.valid_from <= ?1 AND (w.valid_from, w.id) > (v.valid_from, v.id))
				LIMIT ?2) RETURNING org_id`, fmtTime(cutoff), campaignVersionSweepBatch)
			if err != nil {
				return err
			}
			for rows.Next() {
				var org string
				if err := rows.Scan(&org); err != nil {
					rows.Close()
					return err
				}
				tx.Changing(entCampaign, org)
				n++
			}
			return errors.Join(rows.Err(), rows.Close())
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < campaignVersionSweepBatch {
			return total, nil
		}
	}
}

// campaignHistory is an org's campaigns with all their versions, decoded,
// oldest first per campaign (campaignsAt), plus those without versions as
// they are.
type campaignHistory struct {
	versions [][]campaignVersion // per campaign, in campaign id order
	plain    []kassa.Campaign    // campaigns without versions
	size     int                 // versions and plain campaigns: what histories counts
}

type campaignVersion struct {
	validFrom string // TimeFormat: text order is time order
	c         kassa.Campaign
}

// histories holds each org's campaignHistory for the writer, where the hub
// prices every edge order that claims a campaign (hubCampaigns): reading
// and decoding the versions for each order was most of the hub's apply
// time with many campaigns (BenchmarkSync with KASSA_BENCH_SYNC_CAMPAIGNS;
// docs/performance.md). It is read in the writer's units, from
// their view. An org's history is forgotten whenever a unit writes one of
// its campaigns or versions (Tx.changing) and after any batch
// with such a unit (runBatch, committed or not), so it never holds a
// version a rolled-back unit wrote, nor misses one a unit of the batch
// did; other orgs' stay held. The campaigns it hands out share their
// slices: read only, like the live campaigns of campaignCache.
type histories struct {
	mu   sync.Mutex
	m    map[string]*campaignHistory
	held int // versions held, at most maxHeldVersions
	// forgets counts forget's calls: a history read while one ran is
	// not held (on PostgreSQL several write loops read and forget at
	// once, and a read from before another loop's commit must not be
	// held after that commit's forget).
	forgets uint64
	reads   atomic.Int64 // histories read from the store (tests)
}

// maxHeldVersions bounds the versions histories holds (some 2 KiB each
// decoded): past it, other orgs' histories are dropped to make room (an
// org with more is held alone). The hub's retention of campaign_versions
// (PruneCampaignVersions) keeps an org below it unless the org writes its
// campaigns some 90 times a day (at the default 90 days).
const maxHeldVersions = 8192

// forget drops the histories of orgIDs.
func (h *histories) forget(orgIDs ...string) {
	h.mu.Lock()
	h.forgets++
	for _, id := range orgIDs {
		if ch, ok := h.m[id]; ok {
			delete(h.m, id)
			h.held -= ch.size
		}
	}
	h.mu.Unlock()
}

// of returns orgID's history, read on q when not held.
func (h *histories) of(ctx context.Context, q querier, orgID string) (*campaignHistory, error) {
	h.mu.Lock()
	ch, forgets := h.m[orgID], h.forgets
	h.mu.Unlock()
	if ch != nil {
		return ch, nil
	}
	ch, err := readHistory(ctx, q, orgID)
	if err != nil {
		return nil, err
	}
	h.reads.Add(1)
	return h.hold(orgID, ch, forgets), nil
}

// readHistory reads org's campaigns from the store: their versions, and
// the campaigns that have none.
func readHistory(ctx context.Context, q querier, orgID string) (*campaignHistory, error) {
	ch := &campaignHistory{}
	if err := ch.readVersions(ctx, q, orgID); err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, campaignCols+` WHERE org_id = ? AND NOT EXISTS (SELECT 1 FROM campaign_versions v
		WHERE v.org_id = campaigns.org_id AND v.campaign_id = campaigns.id)`, orgID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		c, err := scanCampaign(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		ch.plain = append(ch.plain, *c)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	ch.size = len(ch.plain)
	for _, vs := range ch.versions {
		ch.size += len(vs)
	}
	return ch, nil
}

// readVersions reads the versions of org's campaigns, per campaign.
func (ch *campaignHistory) readVersions(ctx context.Context, q querier, orgID string) error {
	rows, err := q.QueryContext(ctx, `SELECT c.id, v.valid_from, v.state FROM campaigns c
		JOIN campaign_versions v ON v.org_id = c.org_id AND v.campaign_id = c.id
		WHERE c.org_id = ? ORDER BY c.id, v.valid_from, v.id`, orgID)
	if err != nil {
		return err
	}
	last := ""
	for rows.Next() {
		var id string
		var v campaignVersion
		var state string
		if err := rows.Scan(&id, &v.validFrom, &state); err != nil {
			rows.Close()
			return err
		}
		if err := json.Unmarshal([]byte(state), &v.c); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: campaign version: %w", err)
		}
		v.c.Rules, v.c.LocationIDs, v.c.Schedule.DaysOfWeek = orEmpty(v.c.Rules), orEmpty(v.c.LocationIDs), orEmpty(v.c.Schedule.DaysOfWeek)
		if id != last {
			ch.versions = append(ch.versions, nil)
			last = id
		}
		ch.versions[len(ch.versions)-1] = append(ch.versions[len(ch.versions)-1], v)
	}
	return errors.Join(rows.Err(), rows.Close())
}

// hold keeps org's history ch, dropping other orgs' to stay within
// maxHeldVersions, and returns it; unless a forget ran since the read
// began (forgets, then) or another reader kept one first.
func (h *histories) hold(orgID string, ch *campaignHistory, forgets uint64) *campaignHistory {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]*campaignHistory{}
	}
	if _, had := h.m[orgID]; had || h.forgets != forgets {
		return ch
	}
	for id, other := range h.m { // in no particular order
		if h.held+ch.size <= maxHeldVersions {
			break
		}
		delete(h.m, id)
		h.held -= other.size
	}
	h.m[orgID] = ch
	h.held += ch.size
	return ch
}

// campaignsAt returns the org's campaigns as this node had them at instant
// at (clamped to now: not in the future): per campaign, its newest version
// valid from at or before it, or its first version for a campaign made
// after at (not before it existed), or its current row for one without
// versions. A paused or ended state is returned too: kassa.Applies
// leaves it out. The hub prices an edge's order with these (hubCampaigns).
func (db *DB) campaignsAt(ctx context.Context, q querier, orgID string, at, now time.Time) ([]kassa.Campaign, error) {
	ch, err := campaignsIn(db).histories.of(ctx, q, orgID)
	if err != nil {
		return nil, err
	}
	t := fmtTime(earlier(at, now))
	out := make([]kassa.Campaign, 0, len(ch.versions)+len(ch.plain))
	for _, vs := range ch.versions {
		pick := 0 // the first version: a campaign made after at
		for i, v := range vs {
			if v.validFrom <= t {
				pick = i // the newest valid at t (ties: the last written)
			}
		}
		out = append(out, vs[pick].c)
	}
	return append(out, ch.plain...), nil
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// orderCampaigns prices what campaigns give an order at loc at instant at
// (kassa.PriceCampaigns): of live (the org's scheduled and active
// campaigns, not modified), those that apply there and then
// (kassa.Applies, in the location's time zone), with the voucher when
// given. With limits, campaigns whose usage limits this node's redemptions
// (read on q) have reached, in total or for customerID, are left out.
// Errors: EInvalid naming voucher_code when no campaign with the code
// applies, or it is used up.
func orderCampaigns(ctx context.Context, q querier, live []kassa.Campaign, orgID string, loc *kassa.Location, at time.Time, customerID *string,
	lines []kassa.CampaignLine, voucher *string, limits bool) (kassa.CampaignPrice, error) {
	tz := zone(loc.Timezone)
	code := ""
	if voucher != nil {
		code = kassa.NormalizeVoucher(*voucher)
	}
	found, usedUp := code == "", false
	// kept is live itself while every campaign so far applies (the usual
	// sale: no copy of the campaigns per sale), a copy from the first
	// that does not; PriceCampaigns only reads them.
	kept, copied := live, false
	for i := range live {
		c := &live[i]
		ok := kassa.Applies(c, at, tz, loc.ID)
		isCode := ok && c.VoucherCode != nil && *c.VoucherCode == code
		found = found || isCode
		if ok && limits {
			var err error
			if ok, err = withinLimits(ctx, q, orgID, c, customerID); err != nil {
				return kassa.CampaignPrice{}, err
			}
			usedUp = usedUp || (!ok && isCode)
		}
		switch {
		case !ok && !copied:
			kept, copied = append(make([]kassa.Campaign, 0, len(live)), live[:i]...), true
		case ok && copied:
			kept = append(kept, *c)
		}
	}
	switch {
	case !found:
		return kassa.CampaignPrice{}, kassa.InvalidField("voucher_code", "no campaign with this code applies here and now")
	case usedUp:
		return kassa.CampaignPrice{}, kassa.InvalidField("voucher_code", "this voucher has been used up")
	}
	return kassa.PriceCampaigns(lines, kept, code), nil
}

// withinLimits reports whether c's usage limits leave room for one more
// order (of customerID, for the per-customer limit), by the redemptions
// this node holds: an edge offline sees only its own and what it synced.
func withinLimits(ctx context.Context, q querier, orgID string, c *kassa.Campaign, customerID *string) (bool, error) {
	for _, l := range []struct {
		limit *int64
		where string
		args  []any
	}{
		{c.UsageLimit, "", nil},
		{c.PerCustomerLimit, " AND customer_id = ?", []any{customerID}},
	} {
		if l.limit == nil || (l.args != nil && customerID == nil) {
			continue
		}
		var n int64
		// One row per order and campaign: count(*) counts orders.
		err := q.QueryRowContext(ctx, `SELECT count(*) FROM campaign_redemptions WHERE org_id = ? AND campaign_id = ?`+l.where,
			append([]any{orgID, c.ID}, l.args...)...).Scan(&n)
		if err != nil || n >= *l.limit {
			return false, err
		}
	}
	return true, nil
}

// errLimitTaken: an automatic campaign the order was priced with reached
// its usage limit before the order's unit (a concurrent order took the
// last use); CreateOrder prices it again.
var errLimitTaken = errors.New("campaign usage limit taken meanwhile")

// limitedCampaigns returns those of applied that have a usage limit, from
// live (the campaigns the order was priced with).
func limitedCampaigns(live []kassa.Campaign, applied []kassa.AppliedCampaign) []*kassa.Campaign {
	var out []*kassa.Campaign
	for _, ac := range applied {
		for i := range live {
			if c := &live[i]; c.ID == ac.CampaignID && (c.UsageLimit != nil || c.PerCustomerLimit != nil) {
				out = append(out, c)
			}
		}
	}
	return out
}

// checkLimitsInUnit checks the limits of the campaigns an order applies
// again inside its unit of work: the writer runs units one at a time, so
// of concurrent orders that priced with the last use exactly one gets it.
// Errors: EInvalid naming voucher_code for a used-up voucher campaign,
// errLimitTaken for an automatic one.
func checkLimitsInUnit(ctx context.Context, tx *Tx, orgID string, limited []*kassa.Campaign, customerID, voucher *string) error {
	for _, c := range limited {
		ok, err := withinLimits(ctx, tx, orgID, c, customerID)
		switch {
		case err != nil:
			return err
		case ok:
		case voucher != nil && c.VoucherCode != nil && *c.VoucherCode == *voucher:
			return kassa.InvalidField("voucher_code", "this voucher has been used up")
		default:
			return errLimitTaken
		}
	}
	return nil
}

// Redemptions: one row per order and campaign that gave it a discount or
// points, derived from the order's own campaigns (orders.campaigns) and
// dated at the sale. They are not replicated (migration 0019): every node
// writes its own, an edge in the sale's unit (writeRedemptions) and for
// the orders it applies from the hub's log, the hub for an edge's order
// with the amounts its own campaigns give (redeemAtHub). The rows are
// built here, not with json_each over the order's column in SQL, which
// cost several times as much per sale.

// redemption is the order a redemption row belongs to.
type redemption struct {
	orderID, orgID, locationID string
	customerID                 *string
	total                      int64
	occurredAt                 string
}

// insertRedemptions writes r's rows for the campaigns applied, in one
// statement, with the amounts applied says; a row already there stays.
// With returning it returns the campaigns whose rows it wrote.
func insertRedemptions(ctx context.Context, tx *Tx, r redemption, applied []kassa.AppliedCampaign, returning bool) ([]string, error) {
	if len(applied) == 0 {
		return nil, nil
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO campaign_redemptions (order_id, campaign_id, org_id, location_id, customer_id, amount, order_total, occurred_at) VALUES `)
	args := make([]any, 0, 8*len(applied))
	for i, c := range applied {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
		args = append(args, r.orderID, c.CampaignID, r.orgID, r.locationID, r.customerID, c.Amount, r.total, r.occurredAt)
	}
	q.WriteString(` ON CONFLICT DO NOTHING`)
	if !returning {
		_, err := tx.ExecCached(ctx, q.String(), args...)
		return nil, err
	}
	q.WriteString(` RETURNING campaign_id`)
	rows, err := tx.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, err
	}
	var wrote []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		wrote = append(wrote, id)
	}
	return wrote, errors.Join(rows.Err(), rows.Close())
}

// writeRedemptions writes, in the order's unit, the redemptions of an
// order this node is making (made at the unit's time).
func writeRedemptions(ctx context.Context, tx *Tx, o *kassa.Order) error {
	_, err := insertRedemptions(ctx, tx, redemption{orderID: o.ID, orgID: o.OrgID, locationID: o.LocationID, customerID: o.CustomerID,
		total: o.Total, occurredAt: fmtTime(tx.Now)}, o.Campaigns, false)
	return err
}

// campaignsKey is what the redemptions of an org's orders share in a
// unit of joined pushes (engine/ingest.go): its campaigns' usage limits.
func campaignsKey(orgID string) string { return "campaigns\x00" + orgID }

// redeem writes the redemptions of an order this batch applied or
// changed, from its campaigns, and notes each new one for checkVouchers.
// With gave (the hub's amounts, redeemAtHub) each row's amount is its
// campaign's there (0 when absent) and its total the order's as the hub
// recomputed it, also for rows written before the order's last lines came.
func redeem(ctx context.Context, a *applier, orderID, orgID string, gave map[string]int64) error {
	r := redemption{orderID: orderID, orgID: orgID}
	var customer sql.Null[string]
	var campaigns string
	err := a.Tx.QueryRowContext(ctx, `SELECT location_id, customer_id, total, occurred_at, campaigns FROM orders WHERE id = ? AND org_id = ?`,
		orderID, orgID).Scan(&r.locationID, &customer, &r.total, &r.occurredAt, &campaigns)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // its row arrives later in the log
	}
	if err != nil {
		return err
	}
	r.customerID = nullPtr(customer)
	var applied []kassa.AppliedCampaign
	decodeJSON(campaigns, &applied) // admitted as such at the hub (appliedCampaigns)
	if gave != nil {
		for i := range applied {
			applied[i].Amount = gave[applied[i].CampaignID]
		}
	}
	wrote, err := insertRedemptions(ctx, a.Tx, r, applied, true)
	if err != nil {
		return err
	}
	if len(wrote) > 0 {
		// The org's usage limits are checked once for the batch (checkVouchers).
		a.SharesWith(entOrder, orderID, campaignsKey(orgID))
	}
	for _, c := range wrote {
		campaignsOf(a.State).redeemed[[3]string{orgID, c, customer.V}]++
	}
	if gave == nil || len(wrote) == len(applied) {
		return nil
	}
	for _, c := range applied {
		if !slices.Contains(wrote, c.CampaignID) {
			_, err := a.Tx.ExecContext(ctx, `UPDATE campaign_redemptions SET amount = ?, order_total = ? WHERE org_id = ? AND campaign_id = ? AND order_id = ?`,
				c.Amount, r.total, orgID, c.CampaignID, orderID)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// checkVouchers records a voucher_overused conflict for each campaign that
// the redemptions this batch applied took past its usage_limit, and for
// each campaign and customer they took past its per_customer_limit
// (orders stores took offline, each within the limit as it saw it). Only
// the batch that crosses a limit records it, so replays and later sales
// add none. Nothing is undone: the sales happened; ops see the conflict at
// /sync/conflicts.
func checkVouchers(ctx context.Context, a *applier) error {
	total := map[[2]string]int{}
	for k, added := range campaignsOf(a.State).redeemed {
		total[[2]string{k[0], k[1]}] += added
	}
	for k, added := range total {
		err := overused(ctx, a, k[0], k[1], "usage_limit", "", "", added)
		if err != nil {
			return err
		}
	}
	for k, added := range campaignsOf(a.State).redeemed {
		if k[2] == "" {
			continue
		}
		if err := overused(ctx, a, k[0], k[1], "per_customer_limit", " AND customer_id = ?3", k[2], added); err != nil {
			return err
		}
	}
	return nil
}

// overused records a voucher_overused conflict when campaign id's limit
// (the column named limitCol) is exceeded by its redemptions (of customer,
// with where) now, and was not before this batch added added of them.
// The conflict's local names the limit (and the customer), its remote the
// redemptions counted.
func overused(ctx context.Context, a *applier, orgID, id, limitCol, where, customer string, added int) error {
	var limit sql.NullInt64
	var used int64
	args := []any{orgID, id}
	if customer != "" {
		args = append(args, customer)
	}
	err := a.Tx.QueryRowContext(ctx, `SELECT `+limitCol+`, (SELECT count(*) FROM campaign_redemptions
		WHERE org_id = ?1 AND campaign_id = ?2`+where+`) FROM campaigns WHERE org_id = ?1 AND id = ?2`, args...).Scan(&limit, &used)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !limit.Valid) {
		return nil
	}
	if err != nil || used <= limit.Int64 || used-int64(added) > limit.Int64 {
		return err
	}
	local, remote := map[string]any{limitCol: limit.Int64}, map[string]any{"redemptions": used}
	if customer != "" {
		local["customer_id"], remote["customer_id"] = customer, customer
	}
	return a.Conflict(ctx, orgID, "", kassa.ConflictVoucherOverused, "campaign", id, local, remote)
}

// Campaigns: written at the hub only. Their redemptions were replicated
// until format 2; every node derives them from the order since
// (migration 0019).
var entCampaign = new(noun)

func init() {
	register(entCampaign, noun{Name: "campaign", Table: "campaigns", Digest: orgRows,
		Written: recordCampaignVersion, NewState: func(*engine.DB) any { return &campaignState{} }})
	retire("campaign_redemption", formatStep{Format: 2, Migration: 19})
}

// edgeCampaignPart is the campaigns' part of an edge order's discount as the
// hub computes it (hubCampaigns). The wire's campaign amounts are not
// believed: whatever discount they do not explain counts as manual.
func edgeCampaignPart(ctx context.Context, ad *admitter, orderID, orgID string) (int64, error) {
	cp, err := hubCampaigns(ctx, ad, orderID, orgID)
	return campaignTotal(cp), err
}

// redeemAtHub writes the redemptions of an edge order that claims
// campaigns and whose lines are in (redeem) with the amounts the hub
// computes its campaigns gave the order (hubCampaigns; 0 for a campaign
// that gave it nothing here) and the order's total as the hub recomputed
// it: the hub's analytics and usage limits count no discount an edge's
// wire merely claims. An order whose lines have not come yet is
// recomputed when they arrive later in the log (its rows take the new
// amounts then).
func redeemAtHub(ctx context.Context, a *applier, orderID, orgID string) error {
	cp, err := hubCampaigns(ctx, a.Admitter, orderID, orgID)
	if err != nil {
		return err
	}
	gave := make(map[string]int64, len(cp.Applied))
	for _, c := range cp.Applied {
		gave[c.CampaignID] = c.Amount
	}
	return redeem(ctx, a, orderID, orgID, gave)
}

// hubCampaigns recomputes at the hub what campaigns gave an order an edge
// pushed: the hub's campaigns, as they stood when the order was taken
// (occurred_at, campaignsAt), that applied at its location then, priced
// on its lines with its voucher (without it when no campaign here had the
// code).
func hubCampaigns(ctx context.Context, ad *admitter, orderID, orgID string) (kassa.CampaignPrice, error) {
	priced := campaignsOf(ad.State).priced
	if cp, ok := priced[orderID]; ok {
		return cp, nil
	}
	cp, err := priceCampaigns(ctx, ad, orderID, orgID)
	if err == nil {
		priced[orderID] = cp
	}
	return cp, err
}

// priceCampaigns is hubCampaigns without its memo.
func priceCampaigns(ctx context.Context, ad *admitter, orderID, orgID string) (kassa.CampaignPrice, error) {
	o, err := edgeSaleOf(ctx, ad.Tx, orderID, orgID)
	if err != nil {
		return kassa.CampaignPrice{}, err
	}
	// The campaigns as they stood here when the order was made (its
	// occurred_at, not in the future), from the unit's own view: a
	// campaign paused or changed since prices the order as it did then.
	// The wire's occurred_at is RFC 3339 at any precision (a real edge
	// sends milliseconds); one that is no time is taken as now, which a
	// forged edge could name anyway.
	at, err := time.Parse(time.RFC3339Nano, o.occurred)
	if err != nil {
		at = ad.Tx.Now
	}
	cp, err := o.price(ctx, ad.Tx, at)
	// An edge's clock may run behind the hub's by as much as the hub
	// lets an edge's stamps run ahead of it (Options.MaxSkew): a sale made
	// just after a launch can be dated just before it. When the campaigns
	// as they stood then do not explain the order's discount, the
	// campaigns as they stood that much later (not after now) count, if
	// they explain more — but only campaigns the order claims to have
	// had (its campaigns list; the ids only, never the wire's amounts),
	// and never more than its discount: a campaign launched in that
	// window that the till never applied does not hide a manual discount.
	// A forged edge gains at most a campaign launched or raised within
	// that window after the instant it names, and only by claiming it.
	if later := earlier(at.Add(ad.Tx.DB.MaxSkew), ad.Tx.Now); err == nil && later.After(at) && campaignTotal(cp) < o.discount {
		if cp2, err2 := o.price(ctx, ad.Tx, later); err2 == nil && campaignTotal(cp2) > campaignTotal(cp) && campaignTotal(cp2) <= o.discount &&
			claimsAll(o.claimed, cp2.Applied) {
			cp = cp2
		}
	}
	return cp, err
}

// edgeSale is an edge's order as the hub prices its campaigns: what the
// order says, its location and its lines.
type edgeSale struct {
	orgID, occurred, claimed string
	voucher, customer        sql.Null[string]
	discount                 int64
	loc                      *kassa.Location
	lines                    []kassa.CampaignLine
}

// edgeSaleOf reads order orderID of orgID, its location and its lines in
// the unit.
func edgeSaleOf(ctx context.Context, tx *Tx, orderID, orgID string) (*edgeSale, error) {
	o := &edgeSale{orgID: orgID}
	var locID string
	if err := tx.QueryRowContext(ctx, `SELECT location_id, occurred_at, voucher_code, customer_id, discount_total, campaigns FROM orders WHERE id = ? AND org_id = ?`,
		orderID, orgID).Scan(&locID, &o.occurred, &o.voucher, &o.customer, &o.discount, &o.claimed); err != nil {
		return nil, err
	}
	var err error
	if o.loc, err = findLocation(ctx, tx, orgID, locID); err != nil {
		return nil, err
	}
	o.lines, err = campaignLines(ctx, tx, orderID)
	return o, err
}

// campaignLines are an order's lines as campaigns price them (unit price
// with its modifiers).
func campaignLines(ctx context.Context, tx *Tx, orderID string) ([]kassa.CampaignLine, error) {
	rows, err := tx.QueryContext(ctx, `SELECT l.product_id, l.unit_price, l.modifiers, l.quantity, coalesce(p.category_id, '')
		FROM order_lines l LEFT JOIN products p ON p.id = l.product_id AND p.org_id = l.org_id WHERE l.order_id = ? ORDER BY l.position`, orderID)
	if err != nil {
		return nil, err
	}
	var lines []kassa.CampaignLine
	for rows.Next() {
		var l kassa.CampaignLine
		var mods string
		if err := rows.Scan(&l.ProductID, &l.Unit, &mods, &l.Quantity, &l.CategoryID); err != nil {
			rows.Close()
			return nil, err
		}
		var ms []kassa.LineModifier
		_ = json.Unmarshal([]byte(mods), &ms) // checked by checkOrderLine
		for _, m := range ms {
			l.Unit = kassa.UnitPrice(l.Unit, m.PriceAdjustment)
		}
		lines = append(lines, l)
	}
	return lines, errors.Join(rows.Err(), rows.Close())
}

// price prices the sale with the campaigns as they stood at at; a voucher
// or customer the campaigns refuse is left out.
func (o *edgeSale) price(ctx context.Context, tx *Tx, at time.Time) (kassa.CampaignPrice, error) {
	live, err := storeOf(tx.DB).campaignsAt(ctx, tx, o.orgID, at, tx.Now)
	if err != nil {
		return kassa.CampaignPrice{}, err
	}
	cp, err := orderCampaigns(ctx, tx, live, o.orgID, o.loc, at, nullPtr(o.customer), o.lines, nullPtr(o.voucher), false)
	if kassa.ErrorKind(err) == kassa.EInvalid {
		cp, err = orderCampaigns(ctx, tx, live, o.orgID, o.loc, at, nil, o.lines, nil, false)
	}
	return cp, err
}

// claimsAll reports whether an order's campaigns list (the wire's JSON)
// names every campaign of applied.
func claimsAll(claimedJSON string, applied []kassa.AppliedCampaign) bool {
	var claimed []kassa.AppliedCampaign
	if json.Unmarshal([]byte(claimedJSON), &claimed) != nil {
		return false
	}
	for _, a := range applied {
		if !slices.ContainsFunc(claimed, func(c kassa.AppliedCampaign) bool { return c.CampaignID == a.CampaignID }) {
			return false
		}
	}
	return true
}

// campaignTotal is what campaigns take off an order's lines.
func campaignTotal(cp kassa.CampaignPrice) int64 {
	var sum int64
	for _, d := range cp.LineTotals {
		sum += d
	}
	return sum
}

// campaignBatch is what an apply batch keeps of campaigns.
type campaignBatch struct {
	// campaigned are the orders the batch inserted with campaigns: an
	// edge derives their redemptions (redeem).
	campaigned map[string]bool
	redeemed   map[[3]string]int // org, campaign, customer ("" none) → redemptions the batch applied
	// priced memoizes hubCampaigns per order: it runs in the batch's
	// recompute, after all its changes applied, once for the
	// redemptions and once for the discount check.
	priced map[string]kassa.CampaignPrice
}

// campaignsOf is the batch's campaignBatch (applier.state).
func campaignsOf(state map[*noun]any) *campaignBatch {
	b := batchState[campaignBatch](state, entCampaign)
	if b.redeemed == nil {
		b.campaigned, b.redeemed, b.priced = map[string]bool{}, map[[3]string]int{}, map[string]kassa.CampaignPrice{}
	}
	return b
}

// campaignState is what a store keeps in memory of its campaigns: each
// org's live campaigns, for pricing (campaignCache), and their versions,
// for the writer's pricing of edge orders (histories). A unit that writes
// an org's campaigns or versions (Tx.changing) forgets its history at
// once, and again after its batch, committed or not, so that histories
// never holds a version a rolled-back unit wrote; the live campaigns are
// invalidated after the commit (see campaignCache).
type campaignState struct {
	live      campaignCache
	histories histories
}

// campaignsIn is db's campaignState.
func campaignsIn(db *DB) *campaignState { return db.States[entCampaign].(*campaignState) }

func (s *campaignState) Writing(orgID string) { s.histories.forget(orgID) }

func (s *campaignState) Undone(orgIDs []string) { s.histories.forget(orgIDs...) }

func (s *campaignState) Settled(orgIDs []string, committed bool) {
	if committed {
		s.live.invalidate(orgIDs...)
	}
	s.histories.forget(orgIDs...)
}

var _ engine.UnitWatcher = (*campaignState)(nil)
