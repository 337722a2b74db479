-- Kassa schema, part 6: the trust boundary.
--
-- Every reference between rows stays inside one org: a row may name only
-- rows of its own org (and a payment or refund only its own location's
-- order). Ids are global, so this is checked in the schema, for every
-- writer alike (API, sync apply, a bug): one trigger per reference, on
-- insert and on update of the referencing column. A missing parent is not
-- their business (foreign keys and the sync's out-of-order rule are); a
-- parent of another org is refused with "kassa: cross-org reference".

-- The actor (user or OAuth client) whose request made a change, for the
-- hub's replay of authorization.
ALTER TABLE outbox ADD COLUMN actor TEXT;

-- Why a record was quarantined, as a short code (refused_entity, refused_field,
-- refused_scope, refused_reference, refused_actor, refused_value, apply_failed).
ALTER TABLE sync_quarantine ADD COLUMN reason TEXT NOT NULL DEFAULT 'apply_failed';
-- The row a quarantined record wrote: a later record of that row, or one
-- that names it, is refused too instead of waiting for it forever.
ALTER TABLE sync_quarantine ADD COLUMN entity_id TEXT;
CREATE INDEX sync_quarantine_entity ON sync_quarantine(entity_id);

CREATE TRIGGER categories_parent_id_org_ins BEFORE INSERT ON categories
WHEN EXISTS (SELECT 1 FROM categories WHERE id = NEW.parent_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference categories.parent_id'); END;
CREATE TRIGGER categories_parent_id_org_upd BEFORE UPDATE OF parent_id ON categories
WHEN EXISTS (SELECT 1 FROM categories WHERE id = NEW.parent_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference categories.parent_id'); END;
CREATE TRIGGER products_category_id_org_ins BEFORE INSERT ON products
WHEN EXISTS (SELECT 1 FROM categories WHERE id = NEW.category_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference products.category_id'); END;
CREATE TRIGGER products_category_id_org_upd BEFORE UPDATE OF category_id ON products
WHEN EXISTS (SELECT 1 FROM categories WHERE id = NEW.category_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference products.category_id'); END;
CREATE TRIGGER loyalty_accounts_program_id_org_ins BEFORE INSERT ON loyalty_accounts
WHEN EXISTS (SELECT 1 FROM loyalty_programs WHERE id = NEW.program_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference loyalty_accounts.program_id'); END;
CREATE TRIGGER loyalty_accounts_program_id_org_upd BEFORE UPDATE OF program_id ON loyalty_accounts
WHEN EXISTS (SELECT 1 FROM loyalty_programs WHERE id = NEW.program_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference loyalty_accounts.program_id'); END;
CREATE TRIGGER loyalty_accounts_customer_id_org_ins BEFORE INSERT ON loyalty_accounts
WHEN EXISTS (SELECT 1 FROM customers WHERE id = NEW.customer_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference loyalty_accounts.customer_id'); END;
CREATE TRIGGER loyalty_accounts_customer_id_org_upd BEFORE UPDATE OF customer_id ON loyalty_accounts
WHEN EXISTS (SELECT 1 FROM customers WHERE id = NEW.customer_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference loyalty_accounts.customer_id'); END;
CREATE TRIGGER points_transactions_account_id_org_ins BEFORE INSERT ON points_transactions
WHEN EXISTS (SELECT 1 FROM loyalty_accounts WHERE id = NEW.account_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference points_transactions.account_id'); END;
CREATE TRIGGER points_transactions_account_id_org_upd BEFORE UPDATE OF account_id ON points_transactions
WHEN EXISTS (SELECT 1 FROM loyalty_accounts WHERE id = NEW.account_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference points_transactions.account_id'); END;
CREATE TRIGGER points_transactions_order_id_org_ins BEFORE INSERT ON points_transactions
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference points_transactions.order_id'); END;
CREATE TRIGGER points_transactions_order_id_org_upd BEFORE UPDATE OF order_id ON points_transactions
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference points_transactions.order_id'); END;
CREATE TRIGGER stock_levels_location_id_org_ins BEFORE INSERT ON stock_levels
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference stock_levels.location_id'); END;
CREATE TRIGGER stock_levels_location_id_org_upd BEFORE UPDATE OF location_id ON stock_levels
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference stock_levels.location_id'); END;
CREATE TRIGGER stock_levels_product_id_org_ins BEFORE INSERT ON stock_levels
WHEN EXISTS (SELECT 1 FROM products WHERE id = NEW.product_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference stock_levels.product_id'); END;
CREATE TRIGGER stock_levels_product_id_org_upd BEFORE UPDATE OF product_id ON stock_levels
WHEN EXISTS (SELECT 1 FROM products WHERE id = NEW.product_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference stock_levels.product_id'); END;
CREATE TRIGGER stock_movements_location_id_org_ins BEFORE INSERT ON stock_movements
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference stock_movements.location_id'); END;
CREATE TRIGGER stock_movements_location_id_org_upd BEFORE UPDATE OF location_id ON stock_movements
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference stock_movements.location_id'); END;
CREATE TRIGGER stock_movements_product_id_org_ins BEFORE INSERT ON stock_movements
WHEN EXISTS (SELECT 1 FROM products WHERE id = NEW.product_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference stock_movements.product_id'); END;
CREATE TRIGGER stock_movements_product_id_org_upd BEFORE UPDATE OF product_id ON stock_movements
WHEN EXISTS (SELECT 1 FROM products WHERE id = NEW.product_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference stock_movements.product_id'); END;
CREATE TRIGGER transfers_from_location_id_org_ins BEFORE INSERT ON transfers
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.from_location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference transfers.from_location_id'); END;
CREATE TRIGGER transfers_from_location_id_org_upd BEFORE UPDATE OF from_location_id ON transfers
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.from_location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference transfers.from_location_id'); END;
CREATE TRIGGER transfers_to_location_id_org_ins BEFORE INSERT ON transfers
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.to_location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference transfers.to_location_id'); END;
CREATE TRIGGER transfers_to_location_id_org_upd BEFORE UPDATE OF to_location_id ON transfers
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.to_location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference transfers.to_location_id'); END;
CREATE TRIGGER orders_location_id_org_ins BEFORE INSERT ON orders
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference orders.location_id'); END;
CREATE TRIGGER orders_location_id_org_upd BEFORE UPDATE OF location_id ON orders
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference orders.location_id'); END;
CREATE TRIGGER orders_customer_id_org_ins BEFORE INSERT ON orders
WHEN EXISTS (SELECT 1 FROM customers WHERE id = NEW.customer_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference orders.customer_id'); END;
CREATE TRIGGER orders_customer_id_org_upd BEFORE UPDATE OF customer_id ON orders
WHEN EXISTS (SELECT 1 FROM customers WHERE id = NEW.customer_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference orders.customer_id'); END;
CREATE TRIGGER order_lines_order_id_org_ins BEFORE INSERT ON order_lines
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference order_lines.order_id'); END;
CREATE TRIGGER order_lines_order_id_org_upd BEFORE UPDATE OF order_id ON order_lines
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference order_lines.order_id'); END;
CREATE TRIGGER order_lines_product_id_org_ins BEFORE INSERT ON order_lines
WHEN EXISTS (SELECT 1 FROM products WHERE id = NEW.product_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference order_lines.product_id'); END;
CREATE TRIGGER order_lines_product_id_org_upd BEFORE UPDATE OF product_id ON order_lines
WHEN EXISTS (SELECT 1 FROM products WHERE id = NEW.product_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference order_lines.product_id'); END;
CREATE TRIGGER order_history_order_id_org_ins BEFORE INSERT ON order_history
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference order_history.order_id'); END;
CREATE TRIGGER order_history_order_id_org_upd BEFORE UPDATE OF order_id ON order_history
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference order_history.order_id'); END;
CREATE TRIGGER payments_order_id_org_ins BEFORE INSERT ON payments
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND (org_id != NEW.org_id OR location_id != NEW.location_id))
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference payments.order_id'); END;
CREATE TRIGGER payments_order_id_org_upd BEFORE UPDATE OF order_id ON payments
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND (org_id != NEW.org_id OR location_id != NEW.location_id))
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference payments.order_id'); END;
CREATE TRIGGER refunds_order_id_org_ins BEFORE INSERT ON refunds
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND (org_id != NEW.org_id OR location_id != NEW.location_id))
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference refunds.order_id'); END;
CREATE TRIGGER refunds_order_id_org_upd BEFORE UPDATE OF order_id ON refunds
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND (org_id != NEW.org_id OR location_id != NEW.location_id))
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference refunds.order_id'); END;
CREATE TRIGGER sessions_user_id_org_ins BEFORE INSERT ON sessions
WHEN EXISTS (SELECT 1 FROM users WHERE id = NEW.user_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference sessions.user_id'); END;
CREATE TRIGGER sessions_user_id_org_upd BEFORE UPDATE OF user_id ON sessions
WHEN EXISTS (SELECT 1 FROM users WHERE id = NEW.user_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference sessions.user_id'); END;
CREATE TRIGGER enrolment_tokens_location_id_org_ins BEFORE INSERT ON enrolment_tokens
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference enrolment_tokens.location_id'); END;
CREATE TRIGGER enrolment_tokens_location_id_org_upd BEFORE UPDATE OF location_id ON enrolment_tokens
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference enrolment_tokens.location_id'); END;
CREATE TRIGGER sync_nodes_location_id_org_ins BEFORE INSERT ON sync_nodes
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference sync_nodes.location_id'); END;
CREATE TRIGGER sync_nodes_location_id_org_upd BEFORE UPDATE OF location_id ON sync_nodes
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference sync_nodes.location_id'); END;
