-- Kassa schema, part 40: the sales report's rollups (docs/reports.md,
-- "Rollups"). Node-local, derived from the raw rows at every node (never
-- replicated; no change-record format change).
--
-- sales_days holds, per location, business day (the location's own zone
-- and cutoff) and currency, what the sales report by day sums from the
-- orders and refunds: kept in the same unit of work as the sale, the
-- refund or the change that brought them (the order and refund nouns'
-- hooks), and rebuilt from the raw rows by `kassa-hub reports-rebuild` /
-- `kassa-edge reports-rebuild`.
CREATE TABLE sales_days (
  org_id      TEXT NOT NULL,
  location_id TEXT NOT NULL,
  day         TEXT NOT NULL,  -- YYYY-MM-DD, the location's business day
  currency    TEXT NOT NULL,
  orders      INTEGER NOT NULL,
  gross       INTEGER NOT NULL, -- the orders' subtotals
  discounts   INTEGER NOT NULL, -- their discount totals (campaigns' included)
  campaign    INTEGER NOT NULL, -- the campaigns' part of the discounts
  tax         INTEGER NOT NULL,
  sales       INTEGER NOT NULL, -- the orders' totals
  refunds     INTEGER NOT NULL, -- refunded on the day
  PRIMARY KEY (org_id, location_id, day, currency)
) STRICT, WITHOUT ROWID;

-- report_rollups has a row while sales_days is kept: a store with no
-- orders yet starts with it; a store upgraded with orders reads the raw
-- rows until reports-rebuild has filled sales_days and written the row.
CREATE TABLE report_rollups (
  built_at TEXT NOT NULL
) STRICT;
INSERT INTO report_rollups (built_at) SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE NOT EXISTS (SELECT 1 FROM orders);
