package httpapi_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
)

// openapiDoc is the part of the OpenAPI document client generators read.
type openapiDoc struct {
	Paths      map[string]map[string]openapiOp `json:"paths"`
	Components struct {
		Schemas         map[string]openapiSchema   `json:"schemas"`
		Responses       map[string]json.RawMessage `json:"responses"`
		SecuritySchemes map[string]struct {
			Type, Scheme, BearerFormat string
			Flows                      map[string]struct {
				AuthorizationURL string            `json:"authorizationUrl"`
				TokenURL         string            `json:"tokenUrl"`
				Scopes           map[string]string `json:"scopes"`
			} `json:"flows"`
		} `json:"securitySchemes"`
	} `json:"components"`
}

type openapiOp struct {
	Security      []map[string][]string      `json:"security"`
	Responses     map[string]json.RawMessage `json:"responses"`
	RequestBody   json.RawMessage            `json:"requestBody"`
	RequiredScope string                     `json:"x-required-scope"`
	Parameters    []struct {
		Name   string        `json:"name"`
		Schema openapiSchema `json:"schema"`
	} `json:"parameters"`
}

type openapiSchema struct {
	Ref         string                   `json:"$ref"`
	Description string                   `json:"description"`
	Required    []string                 `json:"required"`
	Properties  map[string]openapiSchema `json:"properties"`
	Enum        []any                    `json:"enum"`
	Items       *openapiSchema           `json:"items"`
}

func mustOpenAPI(t *testing.T, kind string) *openapiDoc {
	t.Helper()
	tn := MustStartNode(t, kind, nil)
	r := tn.Do("GET", "/api/v1/openapi.json", "", nil)
	if r.Status != 200 {
		t.Fatalf("openapi.json: %d", r.Status)
	}
	var doc openapiDoc
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

// TestOpenAPISecurityNamesEachOperationsScope: partners' generators and
// OAuth libraries read the schemes (bearer for first-party JWTs, oauth2
// with the authorization-code and client-credentials flows and every
// scope in words) and each operation's scope from the document.
func TestOpenAPISecurityNamesEachOperationsScope(t *testing.T) {
	doc := mustOpenAPI(t, kassa.NodeHub)
	ss := doc.Components.SecuritySchemes
	if b := ss["bearer"]; b.Type != "http" || b.Scheme != "bearer" || b.BearerFormat != "JWT" {
		t.Errorf("bearer scheme %+v", b)
	}
	o := ss["oauth2"]
	code, cc := o.Flows["authorizationCode"], o.Flows["clientCredentials"]
	if o.Type != "oauth2" || code.AuthorizationURL != "/oauth/authorize" || code.TokenURL != "/api/v1/oauth/token" || cc.TokenURL != "/api/v1/oauth/token" {
		t.Fatalf("oauth2 scheme %+v", o)
	}
	for _, want := range []kassa.Scope{kassa.ScopeCatalogRead, kassa.ScopeAutomationsWrite, kassa.ScopeWebhooksWrite, kassa.ScopeKDS,
		kassa.ScopeLocationsWrite, kassa.ScopePartnersWrite} {
		for flow, f := range o.Flows {
			if f.Scopes[string(want)] == "" {
				t.Errorf("flow %s does not describe scope %s", flow, want)
			}
		}
	}
	for p, ops := range doc.Paths {
		for m, op := range ops {
			switch {
			case op.Security == nil:
				t.Errorf("%s %s has no security of its own", m, p)
			case len(op.Security) == 0: // public
			case op.RequiredScope != "":
				for _, scheme := range []string{"bearer", "oauth2"} {
					if !slices.ContainsFunc(op.Security, func(req map[string][]string) bool {
						return slices.Equal(req[scheme], []string{op.RequiredScope})
					}) {
						t.Errorf("%s %s needs %s but its security is %v", m, p, op.RequiredScope, op.Security)
					}
				}
			}
		}
	}
	products := doc.Paths["/api/v1/catalog/products"]["post"]
	if !slices.ContainsFunc(products.Security, func(req map[string][]string) bool { return slices.Equal(req["oauth2"], []string{"catalog:write"}) }) {
		t.Errorf("POST /catalog/products security %v", products.Security)
	}
}

// TestOpenAPIProblemsPerOperation: each operation lists the RFC 9457
// problems it can answer, so a generated client has a type for each.
func TestOpenAPIProblemsPerOperation(t *testing.T) {
	doc := mustOpenAPI(t, kassa.NodeHub)
	oauthEndpoints := map[string]bool{"/api/v1/oauth/token": true, "/api/v1/oauth/revoke": true, "/api/v1/oauth/introspect": true}
	for p, ops := range doc.Paths {
		for m, op := range ops {
			if oauthEndpoints[p] {
				// RFC 6749 endpoints answer {error, error_description}.
				for _, st := range []string{"400", "401"} {
					if schemaRef(op.Responses[st], "application/json") != "#/components/schemas/OAuthError" {
						t.Errorf("%s %s: %s is %s, not an RFC 6749 error", m, p, st, op.Responses[st])
					}
				}
				continue
			}
			if p == "/api/v1/catalog/graphql" {
				// Every answer of the GraphQL endpoint is a GraphQL response.
				for _, st := range []string{"200", "400", "401", "403", "422", "429"} {
					if schemaRef(op.Responses[st], "application/json") != "#/components/schemas/GraphQLResponse" {
						t.Errorf("%s %s: %s is %s, not a GraphQL response", m, p, st, op.Responses[st])
					}
				}
				continue
			}
			want := []string{"400"}
			if len(op.Security) > 0 {
				want = append(want, "401", "403", "429")
			}
			if strings.Contains(p, "{") {
				want = append(want, "404")
			}
			if op.RequestBody != nil {
				want = append(want, "422")
			}
			if m == "post" && len(op.Security) > 0 {
				want = append(want, "409", "422")
			}
			for _, st := range want {
				raw, ok := op.Responses[st]
				if !ok {
					t.Errorf("%s %s does not document %s", m, p, st)
					continue
				}
				var ref struct {
					Ref string `json:"$ref"`
				}
				json.Unmarshal(raw, &ref)
				name, _ := strings.CutPrefix(ref.Ref, "#/components/responses/")
				if schemaRef(doc.Components.Responses[name], "application/problem+json") != "#/components/schemas/Problem" {
					t.Errorf("%s %s: %s is %s, not a problem+json response", m, p, st, raw)
				}
			}
		}
	}
	problem := doc.Components.Schemas["Problem"]
	if errs := problem.Properties["errors"]; errs.Items == nil || !slices.Contains(errs.Items.Required, "field") {
		t.Errorf("Problem.errors %+v", errs)
	}
	// Route.Errors adds what the shape does not imply: login's 401 and 429,
	// a state conflict of a PATCH, the hub's 503 for a store's money.
	for op, sts := range map[[2]string][]string{
		{"/api/v1/auth/login", "post"}:        {"401", "422", "429"},
		{"/api/v1/orders/{id}", "patch"}:      {"409", "503"},
		{"/api/v1/payments/initiate", "post"}: {"503"},
	} {
		for _, st := range sts {
			if doc.Paths[op[0]][op[1]].Responses[st] == nil {
				t.Errorf("%s %s does not document %s", op[1], op[0], st)
			}
		}
	}
}

// TestOpenAPIEnumsRequiredAndDescriptions: closed sets are enums with the
// values the API uses, fields a response always has are required, and
// every schema and field says what it is.
func TestOpenAPIEnumsRequiredAndDescriptions(t *testing.T) {
	doc := mustOpenAPI(t, kassa.NodeHub)
	s := doc.Components.Schemas
	for _, c := range []struct {
		schema, field string
		want          []any
	}{
		{"Order", "status", []any{"open", "completed", "partially_refunded", "refunded", "cancelled"}},
		{"Order", "channel", []any{"pos", "online", "partner"}},
		{"Order", "kitchen_status", []any{"new", "in_progress", "ready", "served"}},
		{"Payment", "method", []any{"cash", "card", "gift_card", "external", "loyalty_points", "store_credit"}},
		{"Payment", "status", []any{"pending", "authorized", "captured", "voided", "failed", "refunded", "partially_refunded"}},
		{"PaymentInitiate", "method", []any{"cash", "card", "gift_card", "external", "loyalty_points", "store_credit"}},
		{"StockAdjust", "reason", []any{"received", "count", "damaged", "theft", "wastage", "return", "correction"}},
		{"Movement", "ref_type", []any{"order", "refund", "transfer", "adjustment", "layby"}},
		{"Transfer", "status", []any{"in_transit", "received", "cancelled"}},
		{"User", "role", []any{"owner", "manager", "cashier", "kitchen", "ops"}},
		{"UserCreate", "role", []any{"owner", "manager", "cashier", "kitchen", "ops"}},
		{"PointsTransaction", "type", []any{"earn", "redeem", "adjust", "refund"}},
		{"OrderUpdate", "status", []any{"cancelled"}},
	} {
		// One component per set, so a generated client has one type for it.
		ref := s[c.schema].Properties[c.field].Ref
		got := s[strings.TrimPrefix(ref, "#/components/schemas/")].Enum
		if ref == "" || !slices.Equal(got, c.want) {
			t.Errorf("%s.%s refers to %q with enum %v, want %v", c.schema, c.field, ref, got, c.want)
		}
	}
	for _, prm := range doc.Paths["/api/v1/orders"]["get"].Parameters {
		if prm.Name == "status" && prm.Schema.Ref != "#/components/schemas/OrderStatus" {
			t.Errorf("GET /orders?status is %+v, not the OrderStatus set", prm.Schema)
		}
	}
	for schema, fields := range map[string][]string{
		"Order":   {"id", "status", "line_items", "total", "paid_total", "currency", "created_at", "customer_id"},
		"Product": {"id", "name", "sku", "base_price", "is_active", "barcodes", "created_at"},
		"Payment": {"id", "order_id", "amount", "method", "status"},
		"User":    {"id", "email", "role"},
	} {
		for _, f := range fields {
			if !slices.Contains(s[schema].Required, f) {
				t.Errorf("response schema %s does not require %s (required: %v)", schema, f, s[schema].Required)
			}
		}
	}
	for name, sc := range s {
		if sc.Description == "" {
			t.Errorf("schema %s has no description", name)
		}
		for f, p := range sc.Properties {
			if strings.TrimSpace(p.Description) == "" {
				t.Errorf("%s.%s has no description", name, f)
			}
		}
	}
}

// schemaRef returns the $ref of a response's schema in one media type.
func schemaRef(response json.RawMessage, media string) string {
	var resp struct {
		Content map[string]struct {
			Schema struct {
				Ref string `json:"$ref"`
			} `json:"schema"`
		} `json:"content"`
	}
	json.Unmarshal(response, &resp)
	return resp.Content[media].Schema.Ref
}
