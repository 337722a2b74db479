package main

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
)

// TestTillCountsTheDenominationsTheAPITakes: the till page's table of
// notes and coins (DENOMINATIONS in web/static/till/till.js), from which
// the cashier counts a float or a close, is kassa.Denominations for every
// currency: a value the page offers is one the API accepts, and none the
// API knows is missing.
func TestTillCountsTheDenominationsTheAPITakes(t *testing.T) {
	js, err := os.ReadFile("../web/static/till/till.js")
	if err != nil {
		t.Fatal(err)
	}
	table := regexp.MustCompile(`(?s)const DENOMINATIONS = \{(.*?)\};`).FindSubmatch(js)
	if table == nil {
		t.Fatal("no DENOMINATIONS table in till.js")
	}
	rows := regexp.MustCompile(`([A-Z]{3}): \[([0-9, ]+)\]`).FindAllSubmatch(table[1], -1)
	if len(rows) == 0 {
		t.Fatalf("DENOMINATIONS lists no currency: %s", table[1])
	}
	for _, r := range rows {
		cur := string(r[1])
		var page []int64
		for _, v := range strings.Split(string(r[2]), ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", cur, err)
			}
			page = append(page, n)
		}
		if api := kassa.Denominations(cur); !slices.Equal(page, api) {
			t.Errorf("%s: the till counts %v, the API takes %v", cur, page, api)
		}
	}
	for _, cur := range []string{"AUD", "NZD", "USD", "EUR", "GBP"} {
		if kassa.Denominations(cur) != nil && !regexp.MustCompile(cur+`: \[`).Match(table[1]) {
			t.Errorf("the till cannot count %s by denomination", cur)
		}
	}
}
