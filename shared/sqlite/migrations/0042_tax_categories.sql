-- Kassa schema, part 42: tax by item (docs/tax.md). The org's tax
-- categories are a list in its settings (tax_categories); a product or a
-- category names one (the product's wins), and each order line keeps the
-- rate it was taxed at (NULL: the order's tax_rate_bps, as every line
-- before this migration). Replicated with their rows (change-record
-- format 5); an edge of format 1-4 is served rows without them.
ALTER TABLE products ADD COLUMN tax_category_id TEXT;
ALTER TABLE categories ADD COLUMN tax_category_id TEXT;
ALTER TABLE order_lines ADD COLUMN tax_rate_bps INTEGER;
