package sqlite

import (
	"context"
	"database/sql"
	"errors"

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
	hash, err := hashPassword(in.OwnerPassword)
	if err != nil {
		return nil, nil, err
	}
	orgID, userID := s.db.NewID(), s.db.NewID()
	err = s.db.write(ctx, func(tx *Tx) error {
		err := tx.insert(ctx, entOrg, orgID, orgID, map[string]any{"name": in.Name, "currency": in.Currency, "settings": map[string]any{}})
		if isUniqueViolation(err) {
			return kassa.Errorf(kassa.EConflict, "an org named %q exists", in.Name)
		}
		if err != nil {
			return err
		}
		return insertUser(ctx, tx, orgID, userID, &kassa.UserCreate{Email: in.OwnerEmail, Name: in.OwnerName, Role: kassa.RoleOwner}, hash)
	})
	if err != nil {
		return nil, nil, err
	}
	org, err := findOrg(ctx, s.db.reader, orgID)
	if err != nil {
		return nil, nil, err
	}
	u, err := findUser(ctx, s.db.reader, orgID, userID)
	return org, u, err
}

// FindOrg returns the org with that id, or ENotFound.
func (s *OrgService) FindOrg(ctx context.Context, id string) (*kassa.Org, error) {
	return findOrg(ctx, s.db.reader, id)
}

// FindOrgByName returns the org with that name, or ENotFound.
func (s *OrgService) FindOrgByName(ctx context.Context, name string) (*kassa.Org, error) {
	var id string
	err := s.db.reader.QueryRowContext(ctx, `SELECT id FROM orgs WHERE name = ?`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound("org", name)
	}
	if err != nil {
		return nil, err
	}
	return findOrg(ctx, s.db.reader, id)
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
