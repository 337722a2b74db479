package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"sync"

	"golang.org/x/text/currency"

	"kassa.dev/shared/kassa"
)

// OrgService implements kassa.OrgService: tenant provisioning.
type OrgService struct{ db *DB }

// NewOrgService returns the org service of db.
func NewOrgService(db *DB) *OrgService { return &OrgService{db: db} }

var _ kassa.OrgService = (*OrgService)(nil)

// CreateOrg creates an org and its first owner in one transaction. Errors:
// EInvalid, EConflict when the name or the owner's e-mail is taken.
func (s *OrgService) CreateOrg(ctx context.Context, in *kassa.OrgCreate) (*kassa.Org, *kassa.User, error) {
	if err := in.Validate(); err != nil {
		return nil, nil, err
	}
	if err := checkCurrencies(currencyField{"currency", in.Currency}); err != nil {
		return nil, nil, err
	}
	hash, err := hashPassword(in.OwnerPassword)
	if err != nil {
		return nil, nil, err
	}
	orgID, userID := s.db.NewID(), s.db.NewID()
	err = s.db.Write(ctx, func(tx *Tx) error {
		if err := insertOrg(ctx, tx, orgID, in.Name, in.Currency); err != nil {
			return err
		}
		return insertUser(ctx, tx, orgID, userID, &kassa.UserCreate{Email: in.OwnerEmail, Name: in.OwnerName, Role: kassa.RoleOwner}, hash, "owner_email")
	})
	if err != nil {
		return nil, nil, err
	}
	org, err := findOrg(ctx, s.db.Reader, orgID)
	if err != nil {
		return nil, nil, err
	}
	u, err := findUser(ctx, s.db.Reader, orgID, userID)
	return org, u, err
}

// FindOrg returns the org with that id, or ENotFound.
func (s *OrgService) FindOrg(ctx context.Context, id string) (*kassa.Org, error) {
	return findOrg(ctx, s.db.Reader, id)
}

// FindOrgByName returns the org with that name, or ENotFound.
func (s *OrgService) FindOrgByName(ctx context.Context, name string) (*kassa.Org, error) {
	var id string
	err := s.db.Reader.QueryRowContext(ctx, `SELECT id FROM orgs WHERE name = ?`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound("org", name)
	}
	if err != nil {
		return nil, err
	}
	return findOrg(ctx, s.db.Reader, id)
}

// insertOrg writes a new org. Errors: EConflict when the name is taken.
// isoCurrencies are the ISO 4217 codes of the currencies in use as legal
// tender somewhere, as golang.org/x/text/currency knows them: not a
// withdrawn one (DEM), a fund (BOV), a metal (XAU) or XXX and XTS.
var isoCurrencies = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for it := currency.Query(); it.Next(); {
		m[it.Unit().String()] = true
	}
	return m
})

// currencyField is a currency code of a body and the field it came in.
type currencyField struct{ field, code string }

// checkCurrencies refuses, naming the field, a code that is not one of
// isoCurrencies; an empty code is left to the domain's validation.
func checkCurrencies(fs ...currencyField) error {
	var v kassa.Validation
	for _, f := range fs {
		v.Check(f.code == "" || isoCurrencies()[f.code], f.field, "must be the ISO 4217 code of a currency in use (AUD, EUR, JPY…)")
	}
	return v.Err()
}

func insertOrg(ctx context.Context, tx *Tx, id, name, currency string) error {
	err := tx.Insert(ctx, entOrg, id, id, map[string]any{"name": name, "currency": currency, "settings": map[string]any{}})
	if isUniqueViolation(err) {
		return kassa.Errorf(kassa.EConflict, "an org named %q exists", name)
	}
	return err
}

func findOrg(ctx context.Context, q querier, id string) (*kassa.Org, error) {
	var o kassa.Org
	var created, updated string
	err := q.QueryRowContext(ctx, `SELECT id, name, currency, created_at, updated_at FROM orgs WHERE id = ?`, id).
		Scan(&o.ID, &o.Name, &o.Currency, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound("org", id)
	}
	o.CreatedAt, o.UpdatedAt = parseTime(created), parseTime(updated)
	return &o, err
}

// TenantService implements kassa.TenantService at the hub. Its own rows
// (table tenants) are hub-only: written without change records.
type TenantService struct{ db *DB }

// NewTenantService returns the tenant service of db.
func NewTenantService(db *DB) *TenantService { return &TenantService{db: db} }

var _ kassa.TenantService = (*TenantService)(nil)

// CreateTenant creates the org, its owner and its first location, and
// records the caller as the creator, in one unit of work. Errors:
// EForbidden, EInvalid, EConflict.
func (s *TenantService) CreateTenant(ctx context.Context, in *kassa.TenantCreate) (*kassa.Tenant, error) {
	by, err := kassa.TenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if err := checkCurrencies(currencyField{"currency", in.Currency}, currencyField{"location.currency", in.Location.Currency}); err != nil {
		return nil, err
	}
	hash, err := hashPassword(in.Owner.Password)
	if err != nil {
		return nil, err
	}
	var partnerOrg any
	if a := kassa.ActorFrom(ctx); by != kassa.Operator && a != nil {
		partnerOrg = a.OrgID
	}
	orgID, userID, locID := s.db.NewID(), s.db.NewID(), s.db.NewID()
	err = s.db.Write(ctx, func(tx *Tx) error {
		if err := insertOrg(ctx, tx, orgID, in.Name, in.Currency); err != nil {
			return err
		}
		if err := insertUser(ctx, tx, orgID, userID, in.Owner.User(), hash, "owner.email"); err != nil {
			return err
		}
		cur := cmp.Or(in.Location.Currency, in.Currency)
		err := tx.Insert(ctx, entLocation, orgID, locID, map[string]any{
			"name": in.Location.Name, "timezone": in.Location.Timezone, "address": in.Location.Address, "currency": cur,
		})
		if err != nil {
			return err
		}
		now := fmtTime(tx.Now)
		_, err = tx.ExecContext(ctx, `INSERT INTO tenants (org_id, created_by, partner_org_id, owner_id, location_id, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, orgID, by, partnerOrg, userID, locID, now, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return findTenant(ctx, s.db.Reader, orgID)
}

const tenantCols = `SELECT o.id, o.name, o.currency, o.created_at, o.updated_at, coalesce(t.created_by, ''),
	coalesce(t.owner_id, ''), coalesce(t.location_id, ''), t.rate_per_minute, t.rate_burst
	FROM orgs o LEFT JOIN tenants t ON t.org_id = o.id`

func scanTenant(s scanner) (*kassa.Tenant, error) {
	var t kassa.Tenant
	var created, updated, owner, loc string
	var rate, burst sql.NullInt64
	if err := s.Scan(&t.Org.ID, &t.Org.Name, &t.Org.Currency, &created, &updated, &t.CreatedBy, &owner, &loc, &rate, &burst); err != nil {
		return nil, err
	}
	t.ID = t.Org.ID
	t.Org.CreatedAt, t.Org.UpdatedAt = parseTime(created), parseTime(updated)
	t.CreatedAt = t.Org.CreatedAt
	if rate.Valid && burst.Valid {
		t.RateLimit = &kassa.RateLimit{PerMinute: int(rate.Int64), Burst: int(burst.Int64)}
	}
	// The first owner and location as they are now; kept ids only.
	t.Owner = &kassa.User{ID: owner}
	t.Location = &kassa.Location{ID: loc}
	return &t, nil
}

// complete replaces the owner's and location's ids by the rows (nil when
// the org was not created as a tenant, or they are gone).
func completeTenant(ctx context.Context, q querier, t *kassa.Tenant) error {
	owner, loc := t.Owner.ID, t.Location.ID
	t.Owner, t.Location = nil, nil
	var err error
	if owner != "" {
		if t.Owner, err = findUser(ctx, q, t.ID, owner); kassa.ErrorKind(err) == kassa.ENotFound {
			t.Owner, err = nil, nil
		}
	}
	if err == nil && loc != "" {
		if t.Location, err = findLocation(ctx, q, t.ID, loc); kassa.ErrorKind(err) == kassa.ENotFound {
			t.Location, err = nil, nil
		}
	}
	return err
}

func findTenant(ctx context.Context, q querier, orgID string) (*kassa.Tenant, error) {
	t, err := scanTenant(q.QueryRowContext(ctx, tenantCols+` WHERE o.id = ?`, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound("tenant", orgID)
	}
	if err != nil {
		return nil, err
	}
	return t, completeTenant(ctx, q, t)
}

// tenantFilter selects the orgs the caller may see: every org for the
// operator, the ones it created for a partner app.
func tenantFilter(by string) *filter {
	if by == kassa.Operator {
		return &filter{where: "1 = 1"}
	}
	return &filter{where: "t.created_by = ?", args: []any{by}}
}

// FindTenants lists the tenants the caller created (the operator: every org).
func (s *TenantService) FindTenants(ctx context.Context, p kassa.Page) (kassa.List[kassa.Tenant], error) {
	by, err := kassa.TenantCaller(ctx)
	if err != nil {
		return kassa.List[kassa.Tenant]{}, err
	}
	l, err := findPage(ctx, s.db.Reader, tenantCols, tenantFilter(by), p, scanTenant, func(t *kassa.Tenant) string { return t.ID })
	for i := range l.Items {
		if err == nil {
			err = completeTenant(ctx, s.db.Reader, &l.Items[i])
		}
	}
	return l, err
}

// FindTenantByID returns a tenant the caller created (the operator: any
// org), or ENotFound.
func (s *TenantService) FindTenantByID(ctx context.Context, id string) (*kassa.Tenant, error) {
	by, err := kassa.TenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	t, err := findTenant(ctx, s.db.Reader, id)
	if err != nil {
		return nil, err
	}
	if by != kassa.Operator && t.CreatedBy != by {
		return nil, kassa.NotFound("tenant", id)
	}
	return t, nil
}

// SetRateLimit gives an org its own API rate limit, or (r nil) returns it
// to the node's default. The operator only. Errors: EForbidden, EInvalid,
// ENotFound.
func (s *TenantService) SetRateLimit(ctx context.Context, orgID string, r *kassa.RateLimit) (*kassa.Tenant, error) {
	if !kassa.IsOperator(ctx) {
		return nil, kassa.Errorf(kassa.EForbidden, "only the hub's operator sets an org's rate limit")
	}
	var rate, burst any
	if r != nil {
		if err := r.Validate(); err != nil {
			return nil, err
		}
		rate, burst = r.PerMinute, r.Burst
	}
	err := s.db.Write(ctx, func(tx *Tx) error {
		if _, err := findOrg(ctx, tx, orgID); err != nil {
			return err
		}
		now := fmtTime(tx.Now)
		_, err := tx.ExecContext(ctx, `INSERT INTO tenants (org_id, rate_per_minute, rate_burst, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (org_id) DO UPDATE SET rate_per_minute = excluded.rate_per_minute, rate_burst = excluded.rate_burst, updated_at = excluded.updated_at`,
			orgID, rate, burst, now, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return findTenant(ctx, s.db.Reader, orgID)
}

// RateLimits returns every org's own rate limit.
func (s *TenantService) RateLimits(ctx context.Context) (map[string]kassa.RateLimit, error) {
	rows, err := s.db.Reader.QueryContext(ctx, `SELECT org_id, rate_per_minute, rate_burst FROM tenants
		WHERE rate_per_minute IS NOT NULL AND rate_burst IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]kassa.RateLimit{}
	for rows.Next() {
		var id string
		var r kassa.RateLimit
		if err := rows.Scan(&id, &r.PerMinute, &r.Burst); err != nil {
			return nil, err
		}
		out[id] = r
	}
	return out, rows.Err()
}

// The org: written at the hub only; its row is its own scope.
var entOrg = new(noun)

func init() {
	register(entOrg, noun{Name: "org", Table: "orgs", OrgCol: "id", Digest: "id = ?1"})
}
