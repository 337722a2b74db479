package kassa

import "testing"

// Every scope an app may ask for is worded for the consent page: a scope
// without words would show the merchant an empty line to approve.
func TestEveryOAuthScopeHasWords(t *testing.T) {
	for _, s := range OAuthScopes {
		if ScopeWords(s) == "" {
			t.Errorf("scope %s has no words for the consent page", s)
		}
	}
	if ScopeWords("orders:write") != "Create orders, change their status and start refunds" {
		t.Errorf("orders:write reads %q", ScopeWords("orders:write"))
	}
}
