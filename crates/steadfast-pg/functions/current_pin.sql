-- The version pin of an instance's current execution: NULLs when the instance has no row,
-- its current execution none, or that execution is not pinned. Read here only: release_lease
-- copies it onto the lease row (migrations/0006_lease_pins.sql), and execution_pin_in_range
-- filters by it for a lease row that does not know it.
CREATE OR REPLACE FUNCTION __SCHEMA__.current_pin(
    p_instance text, OUT major integer, OUT minor integer, OUT patch integer
) LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    SELECT e.pinned_major, e.pinned_minor, e.pinned_patch INTO major, minor, patch
    FROM __SCHEMA__.instances AS i
    JOIN __SCHEMA__.executions AS e
      ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
    WHERE i.instance_id = p_instance;
END;
$$;
