-- Kassa schema, part 46: variants, bundles and markdowns (docs/catalog.md).
--
-- A variant is a product row of its own (its sku, barcodes, price, cost and
-- stock) whose variant_of names the product it is a variant of, and whose
-- options (JSON object, e.g. {"size":"M","colour":"red"}) say which. A
-- bundle is a product whose components (JSON [{product_id, quantity}]) are
-- sold with it: its stock is theirs. Both are columns of products, so they
-- replicate with the product (change-record format 5).
ALTER TABLE products ADD COLUMN variant_of TEXT;
ALTER TABLE products ADD COLUMN options TEXT NOT NULL DEFAULT '{}';
ALTER TABLE products ADD COLUMN components TEXT NOT NULL DEFAULT '[]';
CREATE INDEX products_variant_of ON products(org_id, variant_of, id) WHERE variant_of IS NOT NULL;

CREATE TRIGGER products_variant_of_org_ins BEFORE INSERT ON products
WHEN EXISTS (SELECT 1 FROM products p WHERE p.id = NEW.variant_of AND p.org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference products.variant_of'); END;

-- An order line keeps the variant it sold (NULL: the product itself), and,
-- when a markdown lowered its price, the catalog price before it
-- (original_price) and the markdown (markdown_id): unit_price is what it
-- sold at.
ALTER TABLE order_lines ADD COLUMN variant_id TEXT;
ALTER TABLE order_lines ADD COLUMN original_price INTEGER;
ALTER TABLE order_lines ADD COLUMN markdown_id TEXT;

-- Markdowns: scheduled price reductions on products or categories,
-- written at the hub (like campaigns) and replicated org-wide.
CREATE TABLE markdowns (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES orgs(id),
  name         TEXT NOT NULL,
  type         TEXT NOT NULL,              -- percent | price
  value        INTEGER NOT NULL,           -- basis points off (percent) or the new unit price (price)
  product_ids  TEXT NOT NULL DEFAULT '[]',
  category_ids TEXT NOT NULL DEFAULT '[]',
  starts_at    TEXT NOT NULL,
  ends_at      TEXT NOT NULL,
  is_active    INTEGER NOT NULL DEFAULT 1,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  hlc          TEXT NOT NULL,
  origin       TEXT NOT NULL,
  field_hlc    TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX markdowns_org ON markdowns(org_id, id);
CREATE INDEX markdowns_live ON markdowns(org_id, ends_at) WHERE is_active = 1;
CREATE INDEX products_bundles ON products(org_id) WHERE components != '[]';
