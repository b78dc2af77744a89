-- version_in_range for the pin of an instance's current execution, read from the
-- execution row; true when the instance has no row or its current execution none.
-- PL/pgSQL, not SQL: with its subquery PostgreSQL would not inline it, and would plan an
-- SQL function again on every call.
CREATE OR REPLACE FUNCTION __SCHEMA__.execution_pin_in_range(
    p_instance text, p_min integer[], p_max integer[]
) RETURNS boolean LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_in_range boolean;
BEGIN
    SELECT __SCHEMA__.version_in_range(e.pinned_major, e.pinned_minor, e.pinned_patch,
                                       p_min, p_max)
    INTO v_in_range
    FROM __SCHEMA__.instances AS i
    JOIN __SCHEMA__.executions AS e
      ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
    WHERE i.instance_id = p_instance;
    RETURN COALESCE(v_in_range, true);
END;
$$;
