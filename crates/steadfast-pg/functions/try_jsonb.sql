-- A text as jsonb, or NULL when it is not valid JSON. For the rare paths that read stored
-- payloads in SQL (functions/fail_stopped_instance.sql): one bad payload must not make the
-- statement that reads it, and so every claim that meets it, fail.
CREATE OR REPLACE FUNCTION __SCHEMA__.try_jsonb(p_text text)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    RETURN p_text::jsonb;
EXCEPTION WHEN others THEN
    RETURN NULL;
END;
$$;
