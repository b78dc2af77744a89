-- Enqueue a start (StartOrchestration) only if its instance does not exist: no instances
-- row and no start ever enqueued (instance_leases.runnable_from is set by the first one;
-- messages to an instance nothing started leave it NULL, so they do not count). True when
-- enqueued, false when the instance exists.
--
-- The lease row, created blank when missing, is held FOR NO KEY UPDATE until commit, so
-- concurrent exclusive starts of one id run one after the other and only the first
-- enqueues; a plain start's enqueue, which sets runnable_from, waits for it too. Claims
-- skip the locked row (a row with runnable_from NULL has nothing to claim anyway). The
-- blank row never outlives the call: the start is enqueued on it, or it was not created.
CREATE OR REPLACE FUNCTION __SCHEMA__.start_instance_exclusive(p_instance text, p_item text)
RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM __SCHEMA__.instances WHERE instance_id = p_instance) THEN
        RETURN false;
    END IF;
    INSERT INTO __SCHEMA__.instance_leases (instance_id) VALUES (p_instance)
    ON CONFLICT (instance_id) DO NOTHING;
    PERFORM 1 FROM __SCHEMA__.instance_leases
    WHERE instance_id = p_instance AND runnable_from IS NULL
    FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM __SCHEMA__.enqueue_orchestrator(ARRAY[p_instance], ARRAY[p_item],
                                            ARRAY[NULL::float8], ARRAY[NULL::float8]);
    RETURN true;
END;
$$;
