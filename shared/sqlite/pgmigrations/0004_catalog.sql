-- The twin of SQLite migrations 0046 and 0047 (docs/catalog.md):
-- variants and bundles on products, an order line's variant and markdown,
-- markdowns, and their node-local versions.

ALTER TABLE products ADD COLUMN variant_of text;
ALTER TABLE products ADD COLUMN options jsonb NOT NULL DEFAULT '{}';
ALTER TABLE products ADD COLUMN components jsonb NOT NULL DEFAULT '[]';
CREATE INDEX products_variant_of ON products(org_id, variant_of, id) WHERE variant_of IS NOT NULL;
CREATE INDEX products_bundles ON products(org_id) WHERE components <> '[]'::jsonb;
CREATE TRIGGER products_variant_of_org_ins BEFORE INSERT ON products
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('products', 'variant_of');

ALTER TABLE order_lines ADD COLUMN variant_id text;
ALTER TABLE order_lines ADD COLUMN original_price bigint;
ALTER TABLE order_lines ADD COLUMN markdown_id text;

CREATE TABLE markdowns (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES orgs(id),
  name         text NOT NULL,
  type         text NOT NULL,
  value        bigint NOT NULL,
  product_ids  jsonb NOT NULL DEFAULT '[]',
  category_ids jsonb NOT NULL DEFAULT '[]',
  starts_at    text NOT NULL,
  ends_at      text NOT NULL,
  is_active    integer NOT NULL DEFAULT 1,
  created_at   text NOT NULL,
  updated_at   text NOT NULL,
  hlc          text NOT NULL,
  origin       text NOT NULL,
  field_hlc    jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX markdowns_org ON markdowns(org_id, id);
CREATE INDEX markdowns_live ON markdowns(org_id, ends_at) WHERE is_active = 1;

CREATE TABLE markdown_versions (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id      text NOT NULL,
  markdown_id text NOT NULL,
  valid_from  text NOT NULL,
  state       jsonb NOT NULL
);
CREATE INDEX markdown_versions_at ON markdown_versions(org_id, markdown_id, valid_from);
