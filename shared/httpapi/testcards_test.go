package httpapi_test

import (
	"os"
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/processor"
)

// TestTheTestCardsAreDocumentedAsTheyBehave: every card the simulator
// knows (processor.TestCards) is in the README's table and in the
// OpenAPI document's description, so a partner or a tester can take a
// card payment without reading shared/processor, and each one does at
// the API what the table says it does online (issue 21).
func TestTheTestCardsAreDocumentedAsTheyBehave(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	desc, _ := tn.Do("GET", "/api/v1/openapi.json", "", nil).JSON()["info"].(map[string]any)["description"].(string)
	f := ordFixtureOn(t, tn)
	latte := f.product("Latte", "LAT-T", 450)
	for _, c := range processor.TestCards {
		row := "| `" + c.Number + "` |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("the README's test cards lack %s", c.Number)
		}
		if !strings.Contains(desc, c.Number) {
			t.Errorf("the OpenAPI description lacks %s", c.Number)
		}
		order := f.simpleOrder(f.locA, latte, 1)["id"].(string)
		p := f.must(f.payCard(order, 450, c.Number, true), 201).Data()
		reason, _ := p["failure_reason"].(string)
		switch {
		case strings.HasPrefix(c.Online, "approved"):
			if p["status"] != "captured" {
				t.Errorf("%s: %v, documented %q", c.Number, p, c.Online)
			}
		case p["status"] != "failed" || reason == "" || !strings.Contains(c.Online, reason):
			t.Errorf("%s: status %v failure_reason %q, documented %q", c.Number, p["status"], reason, c.Online)
		}
		for _, l := range strings.Split(string(readme), "\n") {
			if strings.HasPrefix(l, row) && reason != "" && !strings.Contains(l, "`"+reason+"`") {
				t.Errorf("the README's row of %s does not name %s: %s", c.Number, reason, l)
			}
		}
	}
}
