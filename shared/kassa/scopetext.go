package kassa

import (
	"slices"
	"strings"
)

// scopeWords are the spec's scope table (part 5) in the words a merchant
// reads on the consent page: what an app may do, one sentence per scope.
var scopeWords = map[Scope]string{
	ScopeCatalogRead:      "See products, categories, modifiers and price lists",
	ScopeCatalogWrite:     "Create and change products, categories and price lists",
	ScopeOrdersRead:       "See orders and their line items",
	ScopeOrdersWrite:      "Create orders, change their status and start refunds",
	ScopeCustomersRead:    "Search and see customer profiles",
	ScopeCustomersWrite:   "Create and change customer records",
	ScopeLoyaltyRead:      "See loyalty programs, members and point balances",
	ScopeLoyaltyWrite:     "Add and redeem loyalty points",
	ScopePaymentsRead:     "See payment records and payment methods",
	ScopePaymentsWrite:    "Create payment intents, capture and void payments",
	ScopeInventoryRead:    "See stock levels, stock movements and alerts",
	ScopeInventoryWrite:   "Adjust stock and create transfers between locations",
	ScopeReportsRead:      "See sales, inventory and financial reports",
	ScopeWebhooksWrite:    "Register and manage webhook subscriptions",
	ScopeAutomationsRead:  "See automation rules and their execution history",
	ScopeAutomationsWrite: "Create and change automation rules",
	ScopeKDS:              "Follow the kitchen display feed and bump tickets",
	ScopeLocationsWrite:   "Create locations",
	ScopePartnersWrite:    "Create new merchant accounts (tenants)",
}

// ScopeWords returns what scope lets an app do, as a sentence for the
// merchant, or "" for a scope Kassa does not know.
func ScopeWords(s Scope) string { return scopeWords[s] }

// ParseScopes parses an OAuth scope parameter (RFC 6749 3.3: scopes
// separated by spaces) into known scopes in the order given, without
// repeats. Errors: EInvalid for an empty parameter or an unknown scope.
func ParseScopes(param string) ([]Scope, error) {
	var out []Scope
	for _, f := range strings.Fields(param) {
		s := Scope(f)
		if scopeWords[s] == "" {
			return nil, Errorf(EInvalid, "unknown scope %q", f)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, Errorf(EInvalid, "scope is required")
	}
	return out, nil
}

// GrantableScopes is the consent rule: of the requested scopes, those the
// app registered and the approving user's role grants, in the requested
// order. Empty means the user can only deny.
func GrantableScopes(requested, registered []Scope, role Role) []Scope {
	may := roleScopes[role]
	var out []Scope
	for _, s := range requested {
		if slices.Contains(registered, s) && slices.Contains(may, s) {
			out = append(out, s)
		}
	}
	return out
}
