-- Kassa schema, part 36: a product's cost (docs/reports.md). What one unit
-- costs the business, in minor units of the org's currency; NULL when not
-- known. The inventory report values stock at cost where it is known and
-- flags the rest (at base price); the sales report by product or category
-- gives the gross margin of the lines whose product has a cost. Replicated
-- with the product (change-record format 5); an edge of format 1-4 is
-- served products without it.
ALTER TABLE products ADD COLUMN cost INTEGER;
