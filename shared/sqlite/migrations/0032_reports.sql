-- Kassa schema, part 32: indexes for reports (docs/reports.md). Reports
-- scan each location's rows by the instants of its business days, computed
-- in Go (kassa.DayClock): these indexes make those range scans. Node-local
-- (indexes are not replicated); no change-record format change.
--
-- The orders index covers the sales-by-day report's columns, so a year of a
-- store's sales is summed from the index alone but for the orders with
-- campaigns (their campaign part is in the row's JSON).
CREATE INDEX orders_completed ON orders(org_id, location_id, completed_at, status, subtotal, discount_total, tax_total, total, currency, campaigns)
  WHERE completed_at IS NOT NULL;
CREATE INDEX refunds_location ON refunds(org_id, location_id, created_at);
CREATE INDEX payments_captured ON payments(org_id, location_id, captured_at) WHERE captured_at IS NOT NULL;
CREATE INDEX stock_movements_created ON stock_movements(org_id, location_id, created_at);
CREATE INDEX drawer_entries_created ON drawer_entries(org_id, location_id, created_at);
CREATE INDEX points_transactions_created ON points_transactions(org_id, created_at);
CREATE INDEX gift_card_transactions_created ON gift_card_transactions(org_id, created_at);
CREATE INDEX z_reports_day ON z_reports(org_id, business_day);
