-- instance_leases.ready_at (the baseline migration) may be early (that costs a claim one empty
-- try) but never late. Every enqueue either lowers it, holding the row until it commits,
-- or finds it low enough while it holds the instance's fence shared
-- (functions/ready_at_fence_key.sql), or it leaves a hint (functions/enqueue_orchestrator.sql).
-- So it may be raised only here (and by a redelivery's claim, past that lease:
-- functions/stamp_lease.sql says why that is safe):
--
-- fence_ready_at takes the fence exclusive and the row FOR UPDATE SKIP LOCKED, both
-- without waiting: while an enqueue that a raise could miss is in flight, one of them
-- fails, and it returns false. Once it holds both, every later enqueue finds the fence
-- taken and leaves a hint instead. It then drops the instance's hints, in a statement of
-- its own: a hint committed after that survives, and its message, committed with it, is
-- seen by the statement that raises ready_at next (first_ready_at, read in a later
-- statement). Called with the lease row held (a claim, an ack, a release).
CREATE OR REPLACE FUNCTION __SCHEMA__.fence_ready_at(p_instance text)
RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(__SCHEMA__.ready_at_fence_key(p_instance)) THEN
        RETURN false;
    END IF;
    PERFORM 1
    FROM __SCHEMA__.instance_leases AS l
    WHERE l.instance_id = p_instance
    FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    DELETE FROM __SCHEMA__.ready_hints AS h WHERE h.instance_id = p_instance;
    RETURN true;
END;
$$;

-- When the instance's earliest ready message becomes visible (NULL: none).
CREATE OR REPLACE FUNCTION __SCHEMA__.first_ready_at(p_instance text)
RETURNS timestamptz LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    RETURN (SELECT min(q.visible_at)
            FROM __SCHEMA__.orchestrator_queue AS q
            WHERE q.instance_id = p_instance AND NOT q.waiting);
END;
$$;

-- Set ready_at to the truth if fence_ready_at allows it. Returns whether it did.
CREATE OR REPLACE FUNCTION __SCHEMA__.settle_ready_at(p_instance text)
RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    IF NOT __SCHEMA__.fence_ready_at(p_instance) THEN
        RETURN false;
    END IF;
    UPDATE __SCHEMA__.instance_leases AS l
    SET ready_at = __SCHEMA__.first_ready_at(p_instance)
    WHERE l.instance_id = p_instance;
    RETURN true;
END;
$$;
