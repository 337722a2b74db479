package kassa

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

// Customer field bounds.
const (
	MaxCustomerName     = 100
	MaxCustomerNotes    = 2000
	MaxLoyaltyMemberID  = 64
	MaxPreferencesBytes = 8 << 10 // preferences, encoded as JSON
)

var phoneRe = regexp.MustCompile(`^[0-9 +()-]{3,32}$`)

// ValidPhone reports whether s is 3-32 characters of digits, spaces and
// + - ( ), with at least one digit.
func ValidPhone(s string) bool {
	return phoneRe.MatchString(s) && strings.ContainsAny(s, "0123456789")
}

// ValidBirthday reports whether s is a real calendar date YYYY-MM-DD from
// 1900 on that is not in the future anywhere on earth at now (the date at
// UTC+14 is the latest there is, so no shop's "today" is refused).
func ValidBirthday(s string, now time.Time) bool {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil || d.Format(time.DateOnly) != s || d.Year() < 1900 {
		return false
	}
	return s <= now.UTC().Add(14*time.Hour).Format(time.DateOnly)
}

// NormalizePhone trims the blanks around a phone number.
func NormalizePhone(s string) string { return strings.TrimSpace(s) }

// Normalize puts the e-mail and phone in their stored form (e-mail
// trimmed and lower-cased, phone trimmed); Validate checks the result.
func (in *CustomerCreate) Normalize() {
	if in.Email != nil {
		e := NormalizeEmail(*in.Email)
		in.Email = &e
	}
	if in.Phone != nil {
		p := NormalizePhone(*in.Phone)
		in.Phone = &p
	}
}

// Validate checks a new customer, normalized, as of now (for the birthday).
// At least one of a name, an e-mail or a phone is needed.
func (in *CustomerCreate) Validate(now time.Time) error {
	var v Validation
	checkName(&v, "first_name", in.FirstName)
	checkName(&v, "last_name", in.LastName)
	if in.Email != nil {
		checkEmail(&v, *in.Email)
	}
	if in.Phone != nil {
		checkPhone(&v, *in.Phone)
	}
	if in.Birthday != nil {
		checkBirthday(&v, *in.Birthday, now)
	}
	checkPreferences(&v, in.Preferences)
	if in.LoyaltyMemberID != nil {
		checkMemberID(&v, *in.LoyaltyMemberID)
	}
	checkStrings(&v, "tags", in.Tags, 64)
	v.Check(ValidText(in.Notes, MaxCustomerNotes), "notes", "must be at most 2000 characters of text")
	if in.FirstName == "" && in.LastName == "" && in.Email == nil && in.Phone == nil {
		v.Add("first_name", "is required unless last_name, email or phone is given")
	}
	return v.Err()
}

// Normalize puts a present e-mail and phone in their stored form.
func (in *CustomerUpdate) Normalize() {
	if in.Email.Set && !in.Email.Null {
		in.Email.Value = NormalizeEmail(in.Email.Value)
	}
	if in.Phone.Set && !in.Phone.Null {
		in.Phone.Value = NormalizePhone(in.Phone.Value)
	}
}

// Validate checks the fields present in a customer update, normalized, as
// of now. Null clears email, phone, birthday and loyalty_member_id, and
// empties preferences and tags; first_name, last_name and notes are
// cleared with "" instead. That the customer keeps a name, an e-mail or a
// phone needs the stored row: the store checks it.
func (in *CustomerUpdate) Validate(now time.Time) error {
	var v Validation
	for _, f := range []struct {
		name string
		o    Opt[string]
		max  int
	}{{"first_name", in.FirstName, MaxCustomerName}, {"last_name", in.LastName, MaxCustomerName}, {"notes", in.Notes, MaxCustomerNotes}} {
		if !f.o.Set {
			continue
		}
		if f.o.Null {
			v.Add(f.name, `cannot be null; send "" to clear it`)
		} else if f.name == "notes" {
			v.Check(ValidText(f.o.Value, f.max), f.name, "must be at most 2000 characters of text")
		} else {
			checkName(&v, f.name, f.o.Value)
		}
	}
	if in.Email.Set && !in.Email.Null {
		checkEmail(&v, in.Email.Value)
	}
	if in.Phone.Set && !in.Phone.Null {
		checkPhone(&v, in.Phone.Value)
	}
	if in.Birthday.Set && !in.Birthday.Null {
		checkBirthday(&v, in.Birthday.Value, now)
	}
	if in.Preferences.Set {
		checkPreferences(&v, in.Preferences.Value)
	}
	if in.LoyaltyMemberID.Set && !in.LoyaltyMemberID.Null {
		checkMemberID(&v, in.LoyaltyMemberID.Value)
	}
	if in.Tags.Set {
		checkStrings(&v, "tags", in.Tags.Value, 64)
	}
	return v.Err()
}

func checkName(v *Validation, field, s string) {
	v.Check(ValidText(s, MaxCustomerName) && !strings.ContainsAny(s, "\n\t"), field, "must be at most 100 characters of text on one line")
}

func checkEmail(v *Validation, s string) {
	v.Check(ValidEmail(s), "email", "must be an e-mail address such as ann@example.com (null for none)")
}

func checkPhone(v *Validation, s string) {
	v.Check(ValidPhone(s), "phone", "must be 3-32 digits, spaces or + - ( ) (null for none)")
}

func checkBirthday(v *Validation, s string, now time.Time) {
	v.Check(ValidBirthday(s, now), "birthday", "must be a date YYYY-MM-DD from 1900 on, not in the future (null for none)")
}

func checkMemberID(v *Validation, s string) {
	v.Check(s != "" && ValidText(s, MaxLoyaltyMemberID) && !strings.ContainsAny(s, "\n\t"), "loyalty_member_id", "must be 1-64 characters of text (null for none)")
}

func checkPreferences(v *Validation, p map[string]any) {
	b, err := json.Marshal(p)
	v.Check(err == nil && len(b) <= MaxPreferencesBytes, "preferences", "must be a JSON object of at most 8 KiB")
}

// KeepsContact refuses an update that leaves c with no name, e-mail or
// phone, naming the fields the update cleared. Errors: EInvalid.
func KeepsContact(c *Customer, in *CustomerUpdate) error {
	first, last, email, phone := c.FirstName, c.LastName, c.Email != nil, c.Phone != nil
	in.FirstName.To(&first)
	in.LastName.To(&last)
	if in.Email.Set {
		email = !in.Email.Null
	}
	if in.Phone.Set {
		phone = !in.Phone.Null
	}
	if first != "" || last != "" || email || phone {
		return nil
	}
	var v Validation
	for _, f := range []struct {
		name string
		set  bool
	}{{"first_name", in.FirstName.Set}, {"last_name", in.LastName.Set}, {"email", in.Email.Set}, {"phone", in.Phone.Set}} {
		if f.set {
			v.Add(f.name, "cannot be cleared: a customer needs a name, an e-mail or a phone")
		}
	}
	return v.Err()
}
