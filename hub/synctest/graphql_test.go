package synctest

import (
	"testing"
	"time"

	"kassa.dev/sync/wait"
)

// TestAnOfflineEdgeAnswersGraphQLWithTheHubsCatalog: a product made with a
// GraphQL mutation at the hub reaches the edge by sync; cut off from the
// hub, the edge answers the GraphQL catalog queries from its own copy and
// takes a manager's mutation, as its REST routes do; after reconnect the
// hub has the edge's product.
func TestAnOfflineEdgeAnswersGraphQLWithTheHubsCatalog(t *testing.T) {
	e := MustStartPair(t)
	type gqlAnswer struct {
		Data   map[string]any
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	gql := func(p interface {
		Call(testing.TB, string, string, string, any, any) int
	}, tok, query string) (int, gqlAnswer) {
		t.Helper()
		var a gqlAnswer
		st := p.Call(t, "POST", "/api/v1/catalog/graphql", tok, map[string]any{"query": query}, &a)
		return st, a
	}
	st, made := gql(e.hub, e.hubTok, `mutation { createProduct(input: {name: "Graph Muffin", sku: "GQL-MUF", basePrice: 3.95, tags: ["new"]}) { id } }`)
	if st != 200 || len(made.Errors) > 0 {
		t.Fatalf("createProduct at the hub: %d %+v", st, made)
	}
	id := made.Data["createProduct"].(map[string]any)["id"].(string)
	query := `query { product(id: "` + id + `") { name basePrice tags } categories { name } }`
	wait.For(t, 20*time.Second, "the GraphQL product at the edge", func() bool {
		_, a := gql(e.edge, e.edgeTok, query)
		return a.Data["product"] != nil
	})

	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	st, a := gql(e.edge, e.edgeTok, query)
	p, _ := a.Data["product"].(map[string]any)
	if st != 200 || len(a.Errors) > 0 || p["name"] != "Graph Muffin" || p["basePrice"] != 3.95 || len(a.Data["categories"].([]any)) != 5 {
		t.Fatalf("GraphQL at the offline edge: %d %+v", st, a)
	}
	st, a = gql(e.edge, e.edgeMgr, `mutation { createProduct(input: {name: "Offline Tart", sku: "GQL-TART", basePrice: 4.2}) { id } }`)
	if st != 200 || len(a.Errors) > 0 {
		t.Fatalf("a mutation at the offline edge: %d %+v", st, a)
	}
	tart := a.Data["createProduct"].(map[string]any)["id"].(string)
	e.proxy.restore()
	wait.For(t, 30*time.Second, "the edge's GraphQL product at the hub", func() bool {
		_, a := gql(e.hub, e.hubTok, `query { product(id: "`+tart+`") { name basePrice } }`)
		p, _ := a.Data["product"].(map[string]any)
		return p["name"] == "Offline Tart" && p["basePrice"] == 4.2
	})
}
