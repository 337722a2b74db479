-- The cross-org triggers called only for a reference, their check planned
-- once (session 20, helper pgrow, docs/performance.md "The row writes on
-- PostgreSQL"). Each check of 0007 was one plpgsql expression,
-- `NEW.col IS NOT NULL AND EXISTS (...)`: with the column NULL (an order
-- without a customer, most sales) the custom plan folds to false and is
-- always cheaper than the generic one, so PostgreSQL planned it again at
-- every row, and it called plpgsql for nothing. Now each trigger has
-- `WHEN (NEW.col IS NOT NULL)` (evaluated by the executor, no plpgsql
-- call for a NULL), and its function runs the lookup alone as a plain
-- statement, which PostgreSQL plans generically after its first calls.
-- Same rule, same message, same trigger names and events (the schema
-- twin test reads the names). A later migration that adds a cross-org
-- trigger writes it the same way (TestNoCrossOrgTriggerBuildsItsCheckAtEachRow,
-- TestEachCrossOrgTriggerRunsOnlyForAReference).
DO $mig$
DECLARE
  t record;
  m text[];
BEGIN
  -- The triggers first, while the functions still hold 0007's bodies
  -- (the column is read from them).
  FOR t IN SELECT g.oid, p.prosrc FROM pg_trigger g
      JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_proc p ON p.oid = g.tgfoid
      WHERE p.proname LIKE 'kassa\_same\_org\_%' AND NOT g.tgisinternal AND c.relnamespace = current_schema()::regnamespace
  LOOP
    m := regexp_match(t.prosrc, 'IF NEW\.(\w+) IS NOT NULL AND EXISTS');
    IF m IS NULL THEN
      RAISE EXCEPTION 'kassa: migration 0008: a cross-org function not written by 0007: %', t.prosrc;
    END IF;
    EXECUTE regexp_replace(replace(pg_get_triggerdef(t.oid), 'CREATE TRIGGER', 'CREATE OR REPLACE TRIGGER'),
      'FOR EACH ROW EXECUTE FUNCTION', format('FOR EACH ROW WHEN (NEW.%I IS NOT NULL) EXECUTE FUNCTION', m[1]));
  END LOOP;
  FOR t IN SELECT p.proname, p.prosrc FROM pg_proc p
      WHERE p.proname LIKE 'kassa\_same\_org\_%' AND p.pronamespace = current_schema()::regnamespace
  LOOP
    m := regexp_match(t.prosrc, 'IF NEW\.(\w+) IS NOT NULL AND EXISTS \(SELECT 1 FROM (\w+) WHERE');
    EXECUTE format($f$CREATE OR REPLACE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS $b$
BEGIN
  PERFORM FROM %I WHERE id = NEW.%I::text AND (org_id <> NEW.org_id::text%s);
  IF FOUND THEN
    RAISE EXCEPTION 'kassa: cross-org reference %%.%%', TG_TABLE_NAME, %L;
  END IF;
  RETURN NEW;
END $b$$f$, t.proname, m[2], m[1],
      CASE WHEN t.prosrc LIKE '%OR location_id <> NEW.location_id%' THEN ' OR location_id <> NEW.location_id::text' ELSE '' END,
      m[1]);
  END LOOP;
END $mig$;
