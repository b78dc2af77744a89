-- instance_leases.runnable_from (the baseline migration) worked out from the instance's rows, for
-- a lease row that has to be created outside an enqueue (it went missing in a race with
-- a deletion): '-infinity' if the instance was started (instance row or history), else
-- the visibility of its earliest queued start, else NULL.
CREATE OR REPLACE FUNCTION __SCHEMA__.instance_runnable_from(p_instance text)
RETURNS timestamptz LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM __SCHEMA__.instances AS i WHERE i.instance_id = p_instance)
       OR EXISTS (SELECT 1 FROM __SCHEMA__.history AS h WHERE h.instance_id = p_instance) THEN
        RETURN '-infinity'::timestamptz;
    END IF;
    RETURN __SCHEMA__.first_queued_start(p_instance);
END;
$$;
