-- version_in_range for the pin of an instance's current execution (functions/current_pin.sql),
-- true when there is none. PL/pgSQL, not SQL: PostgreSQL would not inline an SQL function
-- that calls another one with OUT columns, and would plan it again on every call.
CREATE OR REPLACE FUNCTION __SCHEMA__.execution_pin_in_range(
    p_instance text, p_min integer[], p_max integer[]
) RETURNS boolean LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_in_range boolean;
BEGIN
    SELECT __SCHEMA__.version_in_range(p.major, p.minor, p.patch, p_min, p_max)
    INTO v_in_range
    FROM __SCHEMA__.current_pin(p_instance) AS p;
    RETURN v_in_range;
END;
$$;
