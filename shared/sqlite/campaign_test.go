package sqlite

import (
	"context"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

func pastryCampaign(w world) *kassa.CampaignCreate {
	return &kassa.CampaignCreate{Name: "10 % off", Type: kassa.CampaignDiscount, LocationIDs: []string{w.loc},
		Rules: []kassa.CampaignRule{{Type: kassa.RuleProductDiscount, DiscountType: kassa.DiscountPercent, Value: 1000, ProductIDs: []string{w.p1}}}}
}

// TestCampaignsReplicateToEdgesAndOnlyFromTheHub: a campaign made at the
// hub reaches an edge by sync; the edge's store, once enrolled, refuses to
// make or change one (409), and the hub quarantines a campaign an edge
// pushes anyway.
func TestCampaignsReplicateToEdgesAndOnlyFromTheHub(t *testing.T) {
	hub, edge := mustNode(t), mustNode(t)
	w := seed(t, hub)
	hubCampaigns := NewCampaignService(hub.db)
	c, err := hubCampaigns.CreateCampaign(w.ctx, pastryCampaign(w))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hubCampaigns.LaunchCampaign(w.ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	syncPair(t, hub, edge)
	edgeCampaigns := NewCampaignService(edge.db)
	got, err := edgeCampaigns.FindCampaignByID(w.ctx, c.ID)
	if err != nil || got.Status != kassa.CampaignActive || len(got.Rules) != 1 || got.Rules[0].ProductIDs[0] != w.p1 {
		t.Fatalf("at the edge: %+v %v", got, err)
	}
	mustConverge(t, hub, edge)

	edge.db.SetUnderHub()
	if _, err := edgeCampaigns.CreateCampaign(w.ctx, pastryCampaign(w)); kassa.ErrorKind(err) != kassa.EConflict {
		t.Fatalf("an enrolled edge made a campaign: %v", err)
	}
	if _, err := edgeCampaigns.UpdateCampaign(w.ctx, c.ID, &kassa.CampaignUpdate{Status: kassa.Some(kassa.CampaignEnded)}); kassa.ErrorKind(err) != kassa.EConflict {
		t.Fatalf("an enrolled edge ended a campaign: %v", err)
	}

	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	forged := change.Change{ID: edge.db.NewID(), OrgID: w.org, Entity: "campaign", EntityID: c.ID, Op: change.OpUpdate,
		Fields: map[string]any{"status": kassa.CampaignEnded}, HLC: edge.db.Clock.Now(), Origin: from.NodeID, Actor: kassa.ActorFrom(w.ctx).UserID}
	if _, quarantined, err := hub.db.Ingest(context.Background(), from, []change.Change{forged}); err != nil || quarantined != 1 {
		t.Fatalf("ingest: quarantined %d, %v", quarantined, err)
	}
	if got, _ := hubCampaigns.FindCampaignByID(w.ctx, c.ID); got.Status != kassa.CampaignActive {
		t.Fatalf("an edge ended the hub's campaign: %s", got.Status)
	}
}
