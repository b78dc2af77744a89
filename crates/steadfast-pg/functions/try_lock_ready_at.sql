-- The fence on an instance's ready_at (functions/settle_ready_at.sql) as a
-- transaction-level advisory lock, tried, never waited for: shared by an enqueue
-- (functions/enqueue_orchestrator.sql) that counts on ready_at staying as low as it found
-- it, exclusive by whoever would raise it. Returns whether it was taken; held until the
-- transaction ends. Keyed on this schema and the instance (a hash: two instances that
-- collide only cost a hint or an early ready_at).
--
-- Not a row lock: PostgreSQL can grant FOR KEY SHARE on a row to one transaction while it
-- grants FOR UPDATE to another (heap_lock_tuple's key-share path re-checks only whether
-- the row was updated meanwhile, not whether it was locked: seen 6 times in 20 s of two
-- loops on one row, PostgreSQL 15). With the enqueue's hold a KEY SHARE row lock, a settle
-- could raise ready_at past a message the enqueue then committed with no hint, and the
-- message waited for the instance's next enqueue (duroxide's stress workload: one
-- orchestration in about a hundred runs never finished; tests/ready_at_races.rs).
CREATE OR REPLACE FUNCTION __SCHEMA__.try_lock_ready_at(p_instance text, p_exclusive boolean)
RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    IF p_exclusive THEN
        RETURN pg_try_advisory_xact_lock(hashtext('__SCHEMA__.ready_at'), hashtext(p_instance));
    END IF;
    RETURN pg_try_advisory_xact_lock_shared(hashtext('__SCHEMA__.ready_at'),
                                            hashtext(p_instance));
END;
$$;
