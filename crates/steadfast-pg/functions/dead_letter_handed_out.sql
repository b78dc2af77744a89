-- Move an instance's handed-out messages (attempt_count > 0) to the dead-letter table,
-- with the attempt count each had reached. Returns how many moved. The caller holds the
-- instance's lease row. Messages never handed out stay queued: they were not part of
-- any failed attempt.
CREATE OR REPLACE FUNCTION __SCHEMA__.dead_letter_handed_out(
    p_instance text, p_execution bigint, p_max_attempts integer, p_reason text, p_error text
) RETURNS integer LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_moved integer;
BEGIN
    WITH moved AS (
        DELETE FROM __SCHEMA__.orchestrator_queue AS q
        WHERE q.instance_id = p_instance AND q.attempt_count > 0
        RETURNING q.id, q.instance_id, q.work_item, q.attempt_count, q.created_at
    ), lettered AS (
        INSERT INTO __SCHEMA__.dead_letters
            (queue, instance_id, execution_id, attempt_count, max_attempts, reason, error,
             work_item, enqueued_at)
        SELECT 'orchestrator', m.instance_id, p_execution, m.attempt_count, p_max_attempts,
               p_reason, p_error, m.work_item, m.created_at
        FROM moved AS m
        ORDER BY m.id
        RETURNING 1
    )
    SELECT count(*)::integer INTO v_moved FROM lettered;
    RETURN v_moved;
END;
$$;
