package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"kassa.dev/shared/kassa"
)

// UserService implements kassa.UserService.
type UserService struct{ db *DB }

// NewUserService returns the user service of db.
func NewUserService(db *DB) *UserService { return &UserService{db: db} }

var _ kassa.UserService = (*UserService)(nil)

const userCols = `SELECT id, org_id, email, name, role, is_active, created_at, updated_at FROM users`

func scanUser(s scanner) (*kassa.User, error) {
	var u kassa.User
	var created, updated string
	if err := s.Scan(&u.ID, &u.OrgID, &u.Email, &u.Name, &u.Role, &u.IsActive, &created, &updated); err != nil {
		return nil, err
	}
	u.CreatedAt, u.UpdatedAt = parseTime(created), parseTime(updated)
	return &u, nil
}

func findUser(ctx context.Context, q querier, orgID, id string) (*kassa.User, error) {
	return findByID(ctx, q, userCols, "user", orgID, id, scanUser)
}

// CreateUser adds a staff account to the caller's org; only owners may.
// Errors: EForbidden, EInvalid (also when the e-mail is taken: see
// insertUser).
func (s *UserService) CreateUser(ctx context.Context, in *kassa.UserCreate) (*kassa.User, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if a.Role != kassa.RoleOwner {
		return nil, kassa.Errorf(kassa.EForbidden, "only an owner can add staff")
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	hash, err := hashPassword(in.Password)
	if err != nil {
		return nil, err
	}
	id := s.db.NewID()
	return writeRead(ctx, s.db, findUser, a.OrgID, id, func(tx *Tx) error { return insertUser(ctx, tx, a.OrgID, id, in, hash, "email") })
}

// emailUnusable is the answer to a new user's e-mail that is taken. An
// e-mail signs in alone (spec 2.2: no org in the login), so it is unique
// on the node, across orgs; the answer is the same whether the address is
// this org's or another's, and says neither (docs/tenants.md), so an owner
// cannot probe which addresses other merchants' staff use.
const emailUnusable = "cannot be used for a new user: give another address"

// insertUser adds a user; a taken e-mail is an EInvalid naming emailField
// (emailUnusable).
func insertUser(ctx context.Context, tx *Tx, orgID, id string, in *kassa.UserCreate, hash, emailField string) error {
	err := tx.insert(ctx, entUser, orgID, id, map[string]any{
		"email": kassa.NormalizeEmail(in.Email), "name": in.Name, "role": string(in.Role),
		"password_hash": hash, "is_active": true,
	})
	if isUniqueViolation(err) {
		return kassa.InvalidField(emailField, emailUnusable)
	}
	return err
}

// UserByEmail returns the user with that e-mail on this node (internal
// callers only: it reads across orgs).
func (db *DB) UserByEmail(ctx context.Context, email string) (*kassa.User, error) {
	u, err := scanUser(db.reader.QueryRowContext(ctx, userCols+` WHERE email = ?`, kassa.NormalizeEmail(email)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound("user", email)
	}
	return u, err
}

// Users: written at the hub only (roles are the hub's word).
var entUser = new(noun)

func init() {
	register(entUser, noun{name: "user", table: "users", digest: orgRows})
}

// Users are the actors of most changes an edge pushes: tried first.
func init() {
	actorSources = append([]func(context.Context, querier, string, string) (batchUser, error){userActor}, actorSources...)
}

// userActor reads a change's actor as a user of the org, for the
// authorization the hub replays (admitter.actor).
func userActor(ctx context.Context, q querier, orgID, id string) (batchUser, error) {
	var u batchUser
	err := q.QueryRowContext(ctx, `SELECT role, is_active FROM users WHERE id = ? AND org_id = ?`, id, orgID).Scan(&u.role, &u.active)
	if errors.Is(err, sql.ErrNoRows) {
		return batchUser{}, nil
	}
	u.found = err == nil
	return u, err
}
