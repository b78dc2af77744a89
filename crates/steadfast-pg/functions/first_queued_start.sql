-- When the earliest start (StartOrchestration, ContinueAsNew) queued for an instance
-- becomes visible; NULL when none is queued.
CREATE OR REPLACE FUNCTION __SCHEMA__.first_queued_start(p_instance text)
RETURNS timestamptz LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    RETURN (SELECT min(q.visible_at)
            FROM __SCHEMA__.orchestrator_queue AS q
            WHERE q.instance_id = p_instance AND __SCHEMA__.starts_instance(q.work_item));
END;
$$;
