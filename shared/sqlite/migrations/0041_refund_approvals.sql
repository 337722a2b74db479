-- Who approved a refund above its actor's refund_limit (issue 26, the
-- till's manager approval): the refund is the cashier's (actor) and the
-- manager or owner who approved it is recorded beside them. NULL when no
-- approval was needed. Replicated with the refund (change-record format 5).
ALTER TABLE refunds ADD COLUMN approved_by TEXT;
