-- Loyalty points as a tender (docs/loyalty.md): a points entry names the
-- loyalty_points payment it redeemed for, or gave back points of.
ALTER TABLE points_transactions ADD COLUMN payment_id TEXT;
CREATE INDEX points_transactions_payment ON points_transactions(payment_id) WHERE payment_id IS NOT NULL;
