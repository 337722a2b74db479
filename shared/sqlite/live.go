package sqlite

import (
	"context"
	"database/sql"
	"strings"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
)

// LiveService reads the node's log of changes for the live feeds
// (GET /api/v1/ws): the outbox (this node's changes; at the hub also those
// it applied from edges) and, at an edge, applied_changes (the hub's
// changes it applied, migration 0016).
type LiveService struct{ db *DB }

// NewLiveService returns the live feeds' reader of db.
func NewLiveService(db *DB) *LiveService { return &LiveService{db: db} }

var _ kassa.LiveService = (*LiveService)(nil)

// liveIn is the SQL list of the entities some topic carries.
var liveIn = func() string {
	es := kassa.LiveEntities()
	for i, e := range es {
		es[i] = "'" + e + "'"
	}
	return "(" + strings.Join(es, ",") + ")"
}()

// LiveChanges returns the org's changes after pos: this node's own first,
// then those applied from the hub (an edge), at most limit. Each change's
// position is the pair reached with it, so resuming from any of them
// sends exactly the rest.
func (s *LiveService) LiveChanges(ctx context.Context, after kassa.LivePosition, limit int) ([]kassa.LiveChange, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 1000 {
		limit = 500
	}
	// A stock movement's product is read from its row (the change record
	// of an applied one is not kept).
	d := engine.D(s.db.Reader)
	own, err := s.read(ctx, `SELECT o.seq, coalesce(o.location_id, ''), o.entity, o.entity_id, o.op, coalesce(m.product_id, l.product_id, '')
		FROM `+d.LogFrom("o")+` LEFT JOIN stock_movements m ON o.entity = 'stock_movement' AND m.id = o.entity_id
		LEFT JOIN stock_levels l ON o.entity = 'stock_level' AND l.id = o.entity_id
		WHERE `+d.LogAfter("o.seq", "?1")+` AND o.org_id = ? AND o.entity IN `+liveIn+` ORDER BY `+d.LogOrder("o.seq")+` LIMIT ?`, after.Own, a.OrgID, limit)
	if err != nil {
		return nil, err
	}
	pos := after
	for i := range own {
		pos.Own = own[i].Position.Own
		own[i].Position = pos
	}
	if s.db.Hub || len(own) == limit {
		return own, nil
	}
	applied, err := s.read(ctx, `SELECT c.seq, coalesce(c.location_id, ''), c.entity, c.entity_id, c.op, coalesce(m.product_id, l.product_id, '')
		FROM applied_changes c LEFT JOIN stock_movements m ON c.entity = 'stock_movement' AND m.id = c.entity_id
		LEFT JOIN stock_levels l ON c.entity = 'stock_level' AND l.id = c.entity_id
		WHERE c.org_id = ? AND c.entity IS NOT NULL AND c.seq > ?`+engine.D(s.db.Reader).Settled("c.seq", "applied_changes")+
		` AND c.entity IN `+liveIn+` ORDER BY c.seq LIMIT ?`,
		a.OrgID, after.Applied, limit-len(own))
	if err != nil {
		return nil, err
	}
	for i := range applied {
		pos.Applied = applied[i].Position.Own
		applied[i].Position = pos
	}
	return append(own, applied...), nil
}

func (s *LiveService) read(ctx context.Context, q string, args ...any) ([]kassa.LiveChange, error) {
	rows, err := s.db.Reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []kassa.LiveChange
	for rows.Next() {
		var c kassa.LiveChange
		if err := rows.Scan(&c.Position.Own, &c.LocationID, &c.Entity, &c.EntityID, &c.Op, &c.ProductID); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// LiveHead is the position of the log's newest change.
func (s *LiveService) LiveHead(ctx context.Context) (kassa.LivePosition, error) {
	var p kassa.LivePosition
	err := s.db.Reader.QueryRowContext(ctx, `SELECT coalesce((SELECT max(seq) FROM outbox), 0),
		coalesce((SELECT max(seq) FROM applied_changes WHERE true`+engine.D(s.db.Reader).Settled("seq", "applied_changes")+`), 0)`).Scan(&p.Own, &p.Applied)
	if s.db.Hub {
		p.Applied = 0
	}
	return p, err
}

// FindStockLevel returns the level of a product at a location of the
// actor's org.
func (s *LiveService) FindStockLevel(ctx context.Context, locationID, productID string) (*kassa.StockLevel, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	l, err := scanStockLevel(s.db.Reader.QueryRowContext(ctx, stockLevelCols+` WHERE org_id = ? AND location_id = ? AND product_id = ?`,
		a.OrgID, locationID, productID))
	if err == sql.ErrNoRows {
		return nil, kassa.Errorf(kassa.ENotFound, "no stock level")
	}
	if err == nil {
		err = addReserved(ctx, s.db.DB, s.db.Reader, l)
	}
	return l, err
}
