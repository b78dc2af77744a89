-- Set instance_leases.ready_at (migration 0009) to the truth: when the instance's earliest
-- ready orchestrator message becomes visible, NULL if it has none; and drop its hints.
-- Called with the instance's lease row held (a claim, an ack, a release).
--
-- Why this is safe: ready_at may be early (that costs a claim one empty try) but never
-- late. Every enqueue either lowers ready_at or finds it low enough, and then holds a lock
-- on the lease row (NO KEY UPDATE or KEY SHARE) until it commits, or it leaves a hint
-- (functions/enqueue_orchestrator.sql). FOR UPDATE conflicts with both locks, so while an
-- enqueue that could be missed below is in flight, the SKIP LOCKED here finds nothing and
-- ready_at stays as it is. Once it holds FOR UPDATE, every later enqueue finds the row
-- locked and leaves a hint instead. The hints go first, in a statement of their own: a
-- hint committed between the two statements then survives, and its message, committed
-- with it, is seen by the second. Returns whether ready_at was settled.
CREATE OR REPLACE FUNCTION __SCHEMA__.settle_ready_at(p_instance text)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1
    FROM __SCHEMA__.instance_leases AS l
    WHERE l.instance_id = p_instance
    FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    DELETE FROM __SCHEMA__.ready_hints AS h WHERE h.instance_id = p_instance;
    UPDATE __SCHEMA__.instance_leases AS l
    SET ready_at = (SELECT min(q.visible_at)
                    FROM __SCHEMA__.orchestrator_queue AS q
                    WHERE q.instance_id = p_instance AND NOT q.waiting)
    WHERE l.instance_id = p_instance;
    RETURN true;
END;
$$;
