package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"unicode"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// CustomerService implements kassa.CustomerService. E-mails are stored
// trimmed and lower-cased and are unique per org among customers not
// deleted. Deleting keeps a tombstone row (deleted_at set) with every
// personal field erased, so the erasure replicates and wins over a
// concurrent update; a deleted customer is not found by any method.
type CustomerService struct{ db *DB }

// NewCustomerService returns the customer service of db.
func NewCustomerService(db *DB) *CustomerService { return &CustomerService{db: db} }

var _ kassa.CustomerService = (*CustomerService)(nil)

const customerCols = `SELECT id, org_id, first_name, last_name, email, phone, birthday, preferences, loyalty_member_id, tags, notes, created_at, updated_at,
	coalesce((SELECT balance FROM store_credits sc WHERE sc.id = customers.id AND sc.org_id = customers.org_id), 0) FROM customers`

func scanCustomer(s scanner) (*kassa.Customer, error) {
	var c kassa.Customer
	var prefs, tags, created, updated string
	if err := s.Scan(&c.ID, &c.OrgID, &c.FirstName, &c.LastName, &c.Email, &c.Phone, &c.Birthday, &prefs,
		&c.LoyaltyMemberID, &tags, &c.Notes, &created, &updated, &c.StoreCredit); err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = parseTime(created), parseTime(updated)
	err := errors.Join(decodeJSON(prefs, &c.Preferences), decodeJSON(tags, &c.Tags))
	if c.Preferences == nil {
		c.Preferences = map[string]any{}
	}
	if c.Tags == nil {
		c.Tags = []string{}
	}
	return &c, err
}

func customerID(c *kassa.Customer) string { return c.ID }

// FindCustomers lists the org's customers by id. Q is a case-insensitive
// substring of the first name, last name, full name, e-mail or phone (a
// phone also matches on its digits alone); Email matches the normalized
// e-mail exactly.
func (s *CustomerService) FindCustomers(ctx context.Context, f kassa.CustomerFilter) (kassa.List[kassa.Customer], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Customer]{}, err
	}
	w := orgFilter(a.OrgID).and("deleted_at IS NULL")
	if f.Email != "" {
		w.and("email = ?", kassa.NormalizeEmail(f.Email))
	}
	if q := strings.TrimSpace(f.Q); q != "" {
		like := "%" + escapeLike(strings.ToLower(q)) + "%"
		// fold lower-cases any script, as strings.ToLower did to q.
		d := engine.D(s.db.Reader)
		cond := d.Fold("first_name") + ` LIKE ? ESCAPE '\' OR ` + d.Fold("last_name") + ` LIKE ? ESCAPE '\'
			OR ` + d.Fold("first_name || ' ' || last_name") + ` LIKE ? ESCAPE '\' OR ` + d.Fold("coalesce(email, '')") + ` LIKE ? ESCAPE '\' OR phone LIKE ? ESCAPE '\'`
		args := []any{like, like, like, like, like}
		if digits := digitsOf(q); len(digits) >= 3 && len(digits) == len(strings.Map(dropPhonePunct, q)) {
			// "0412 345 678" finds "0412-345-678": compare the digits alone.
			cond += ` OR replace(replace(replace(replace(replace(phone, ' ', ''), '-', ''), '(', ''), ')', ''), '+', '') LIKE ?`
			args = append(args, "%"+digits+"%")
		}
		w.and("("+cond+")", args...)
	}
	return findPage(ctx, s.db.Reader, customerCols, w, f.Page, scanCustomer, customerID)
}

// digitsOf returns the ASCII digits of s.
func digitsOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// dropPhonePunct drops the characters a phone number may hold besides digits.
func dropPhonePunct(r rune) rune {
	if unicode.IsSpace(r) || strings.ContainsRune("+-()", r) {
		return -1
	}
	return r
}

// FindCustomerByID returns one customer of the org, or ENotFound (also
// when deleted).
func (s *CustomerService) FindCustomerByID(ctx context.Context, id string) (*kassa.Customer, error) {
	return readOwn(ctx, s.db, findCustomer, id)
}

func findCustomer(ctx context.Context, q querier, orgID, id string) (*kassa.Customer, error) {
	c, err := scanCustomer(q.QueryRowContext(ctx, customerCols+` WHERE org_id = ? AND id = ? AND deleted_at IS NULL`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound("customer", id)
	}
	return c, err
}

// emailTaken is the conflict of a unique index violation on customers:
// the only unique key besides the id is the org's live e-mails.
func emailTaken(email *string) error {
	if email == nil {
		return kassa.Errorf(kassa.EConflict, "the customer conflicts with another one")
	}
	return kassa.Errorf(kassa.EConflict, "a customer with e-mail %q already exists", *email)
}

// CreateCustomer validates and stores a new customer and emits
// customer.created. Errors: EInvalid, EConflict when the e-mail is taken in
// the org.
func (s *CustomerService) CreateCustomer(ctx context.Context, in *kassa.CustomerCreate) (*kassa.Customer, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	in.Normalize()
	if err := in.Validate(s.db.Now()); err != nil {
		return nil, err
	}
	id := s.db.NewID()
	var c *kassa.Customer
	err = s.db.Write(ctx, func(tx *Tx) error {
		err := tx.Insert(ctx, entCustomer, a.OrgID, id, map[string]any{
			"first_name": in.FirstName, "last_name": in.LastName, "email": in.Email, "phone": in.Phone,
			"birthday": in.Birthday, "preferences": orEmptyMap(in.Preferences), "loyalty_member_id": in.LoyaltyMemberID,
			"tags": orEmpty(in.Tags), "notes": in.Notes,
		})
		if isUniqueViolation(err) {
			return emailTaken(in.Email)
		}
		if err != nil {
			return err
		}
		if c, err = findCustomer(ctx, tx, a.OrgID, id); err != nil {
			return err
		}
		tx.Emit(a.OrgID, "", kassa.EventCustomerCreated, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// UpdateCustomer applies a partial update and emits customer.updated when
// a field changed. Errors: ENotFound, EInvalid (also when the customer
// would be left with no name, e-mail or phone), EConflict when the new
// e-mail is taken in the org.
func (s *CustomerService) UpdateCustomer(ctx context.Context, id string, in *kassa.CustomerUpdate) (*kassa.Customer, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	in.Normalize()
	if err := in.Validate(s.db.Now()); err != nil {
		return nil, err
	}
	var out *kassa.Customer
	err = s.db.Write(ctx, func(tx *Tx) error {
		c, err := findCustomer(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		cols := map[string]any{}
		patch(cols, "first_name", c.FirstName, in.FirstName)
		patch(cols, "last_name", c.LastName, in.LastName)
		patchNullable(cols, "email", c.Email, in.Email)
		patchNullable(cols, "phone", c.Phone, in.Phone)
		patchNullable(cols, "birthday", c.Birthday, in.Birthday)
		patchAs(cols, "preferences", c.Preferences, in.Preferences, orEmptyMap)
		patchNullable(cols, "loyalty_member_id", c.LoyaltyMemberID, in.LoyaltyMemberID)
		patchAs(cols, "tags", c.Tags, in.Tags, orEmpty)
		patch(cols, "notes", c.Notes, in.Notes)
		if len(cols) == 0 {
			out = c
			return nil
		}
		if err := kassa.KeepsContact(c, in); err != nil {
			return err
		}
		err = tx.Update(ctx, entCustomer, a.OrgID, id, cols)
		if isUniqueViolation(err) {
			return emailTaken(&in.Email.Value)
		}
		if err != nil {
			return err
		}
		if out, err = findCustomer(ctx, tx, a.OrgID, id); err != nil {
			return err
		}
		tx.Emit(a.OrgID, "", kassa.EventCustomerUpdated, out)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteCustomer erases a customer: one update sets deleted_at and blanks
// every personal field, so the tombstone replicates the erasure. It emits
// customer.updated with the erased customer and "deleted": true. Errors:
// ENotFound (also when already deleted).
func (s *CustomerService) DeleteCustomer(ctx context.Context, id string) error {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return err
	}
	return s.db.Write(ctx, func(tx *Tx) error {
		c, err := findCustomer(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		// Every personal column is written, changed or not: each carries the
		// tombstone's stamp, so the erasure wins field by field at merge.
		err = tx.Update(ctx, entCustomer, a.OrgID, id, map[string]any{
			"deleted_at": tx.Now, "first_name": "", "last_name": "", "email": (*string)(nil), "phone": (*string)(nil),
			"birthday": (*string)(nil), "preferences": map[string]any{}, "notes": "", "tags": []string{},
			"loyalty_member_id": (*string)(nil),
		})
		if err != nil {
			return err
		}
		tombstone := kassa.Customer{ID: c.ID, OrgID: c.OrgID, Preferences: map[string]any{}, Tags: []string{},
			CreatedAt: c.CreatedAt, UpdatedAt: tx.Now}
		tx.Emit(a.OrgID, "", kassa.EventCustomerUpdated, deletedCustomer{Customer: tombstone, Deleted: true})
		return nil
	})
}

// deletedCustomer is the event data of an erasure.
type deletedCustomer struct {
	kassa.Customer
	Deleted bool `json:"deleted"`
}

// Customers: an erasure (deleted_at) wins over any concurrent update and
// blanks the personal fields; an e-mail two stores gave alike while apart
// is dropped from the one with the greater id.
var entCustomer = new(noun)

func init() {
	register(entCustomer, noun{Name: "customer", Table: "customers", Digest: orgRows,
		Tombstone: "deleted_at", Erase: map[string]any{
			"first_name": "", "last_name": "", "email": nil, "phone": nil, "birthday": nil, "preferences": "{}",
			"notes": "", "tags": "[]", "loyalty_member_id": nil},
		Unique: &uniqueKey{Col: "email", Extra: " AND deleted_at IS NULL", GiveWay: func(any, string) any { return nil }},
		Edge: &edgeRule{Update: []string{"first_name", "last_name", "email", "phone", "birthday", "preferences", "loyalty_member_id", "tags", "notes", "deleted_at"},
			Scopes: []kassa.Scope{kassa.ScopeCustomersWrite}, Check: checkCustomer},
		Events: map[string]eventSubject{kassa.EventCustomerCreated: {}, kassa.EventCustomerUpdated: {}}})
}

func checkCustomer(_ context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if _, erased := f["deleted_at"]; erased {
		return nil // an erasure blanks the fields; there is nothing to validate
	}
	now := ad.Tx.Now
	if c.Op == change.OpInsert {
		in := &kassa.CustomerCreate{}
		if err := asInput(f, in); err != nil {
			return err
		}
		return validated(in.Validate(now))
	}
	in := &kassa.CustomerUpdate{}
	if err := asInput(f, in); err != nil {
		return err
	}
	return validated(in.Validate(now))
}
