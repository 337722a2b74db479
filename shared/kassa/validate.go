package kassa

import (
	"net/mail"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

var (
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
	uuidRe     = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	skuRe      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$`)
)

// ValidCurrency reports whether s looks like an ISO 4217 code.
func ValidCurrency(s string) bool { return currencyRe.MatchString(s) }

// ValidID reports whether s is a lower-case UUID string, the form of every id.
func ValidID(s string) bool { return uuidRe.MatchString(s) }

// ValidEmail reports whether s is a plain e-mail address.
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && len(s) <= 254
}

// ValidSKU reports whether s is a usable stock keeping unit: 1–64 letters,
// digits and . _ / - starting with a letter or digit.
func ValidSKU(s string) bool { return skuRe.MatchString(s) }

// ValidTimezone reports whether s names an IANA time zone.
func ValidTimezone(s string) bool {
	if s == "" || s == "Local" {
		return false
	}
	_, err := time.LoadLocation(s)
	return err == nil
}

// ValidText reports whether s is valid UTF-8 of at most max runes with no
// control characters other than newline and tab.
func ValidText(s string, max int) bool {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > max {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' })
}

// ValidName reports whether s is a name: text of 1 to max characters
// that is not only spaces.
func ValidName(s string, max int) bool {
	return strings.TrimSpace(s) != "" && ValidText(s, max)
}

// NormalizeEmail lower-cases and trims an e-mail address for lookups.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
