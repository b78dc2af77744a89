-- Whether the instance's current execution is pinned to a duroxide version outside the
-- range p_min..p_max (each [major, minor, patch]): such an instance is not for a claimer
-- with that range. An instance without metadata, an execution row or a pin is for anyone.
CREATE OR REPLACE FUNCTION __SCHEMA__.pinned_outside(
    p_instance text, p_min integer[], p_max integer[]
) RETURNS boolean LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    RETURN EXISTS (
        SELECT 1
        FROM __SCHEMA__.instances AS i
        JOIN __SCHEMA__.executions AS e
          ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
        WHERE i.instance_id = p_instance
          AND e.pinned_major IS NOT NULL
          AND NOT COALESCE((e.pinned_major, e.pinned_minor, e.pinned_patch)
                           BETWEEN (p_min[1], p_min[2], p_min[3])
                               AND (p_max[1], p_max[2], p_max[3]), false));
END;
$$;
