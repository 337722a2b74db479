package kassa

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
	ScopeSyncWrite:        "Resolve the stores' sync conflicts",
}

// ScopeWords returns what scope lets an app do, as a sentence for the
// merchant, or "" for a scope Kassa does not know.
func ScopeWords(s Scope) string { return scopeWords[s] }
