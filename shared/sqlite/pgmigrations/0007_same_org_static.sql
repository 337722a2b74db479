-- The cross-org triggers with their statement written out (session
-- pgingest2, docs/performance.md): kassa_same_org, the function every
-- one of them called, built its check with EXECUTE format(...) and read
-- the row's columns through to_jsonb(NEW), so PostgreSQL parsed and
-- planned the check, and turned the whole row into jsonb two or three
-- times, at every insert of an order, a line or a payment. Each trigger
-- now calls a function of its own parent table and column, whose check
-- is a plain statement (planned once per connection). Same rule, same
-- message; the triggers keep their names and events (the schema twin
-- test reads their names). A later migration that adds a cross-org
-- trigger gives it its own function the same way
-- (TestNoCrossOrgTriggerBuildsItsCheckAtEachRow).
DO $mig$
DECLARE
  t record;
  parent text;
  col text;
  fn text;
  loc boolean;
BEGIN
  FOR t IN SELECT g.oid, g.tgname, g.tgnargs, g.tgargs, c.relname FROM pg_trigger g
      JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_proc p ON p.oid = g.tgfoid
      WHERE p.proname = 'kassa_same_org' AND NOT g.tgisinternal AND c.relnamespace = current_schema()::regnamespace
  LOOP
    parent := split_part(encode(t.tgargs, 'escape'), '\000', 1);
    col := split_part(encode(t.tgargs, 'escape'), '\000', 2);
    loc := t.tgnargs > 2;
    fn := format('kassa_same_org_%s_%s%s', parent, col, CASE WHEN loc THEN '_loc' ELSE '' END);
    IF loc THEN
      EXECUTE format($f$CREATE OR REPLACE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS $b$
BEGIN
  IF NEW.%I IS NOT NULL AND EXISTS (SELECT 1 FROM %I WHERE id = NEW.%I::text
      AND (org_id <> NEW.org_id::text OR location_id <> NEW.location_id::text)) THEN
    RAISE EXCEPTION 'kassa: cross-org reference %%.%%', TG_TABLE_NAME, %L;
  END IF;
  RETURN NEW;
END $b$$f$, fn, col, parent, col, col);
    ELSE
      EXECUTE format($f$CREATE OR REPLACE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS $b$
BEGIN
  IF NEW.%I IS NOT NULL AND EXISTS (SELECT 1 FROM %I WHERE id = NEW.%I::text AND org_id <> NEW.org_id::text) THEN
    RAISE EXCEPTION 'kassa: cross-org reference %%.%%', TG_TABLE_NAME, %L;
  END IF;
  RETURN NEW;
END $b$$f$, fn, col, parent, col, col);
    END IF;
    EXECUTE regexp_replace(replace(pg_get_triggerdef(t.oid), 'CREATE TRIGGER', 'CREATE OR REPLACE TRIGGER'),
      'EXECUTE FUNCTION .*$', format('EXECUTE FUNCTION %I()', fn));
  END LOOP;
END $mig$;
