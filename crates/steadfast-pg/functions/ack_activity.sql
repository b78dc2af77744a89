-- An ordinary activity ack: only a live lease completes its item. Deletes the item,
-- refreshes its session and enqueues the completion (instance and work item, both NULL
-- for none). Returns false when the lease is not live or the item is gone. The token
-- names its row (functions/token_work_item.sql).
CREATE OR REPLACE FUNCTION __SCHEMA__.ack_activity(
    p_token text, p_completion_instance text, p_completion text
) RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_item bigint := __SCHEMA__.token_work_item(p_token);
    v_session text;
BEGIN
    IF v_item IS NOT NULL THEN
        DELETE FROM __SCHEMA__.worker_queue AS w
        WHERE w.id = v_item AND w.lock_token = p_token AND w.locked_until > clock_timestamp()
        RETURNING w.session_id INTO v_session;
    ELSE
        -- A token that does not name its row, from a build before schema version 5 still
        -- running during a rolling upgrade: found by a scan of the queue.
        DELETE FROM __SCHEMA__.worker_queue AS w
        WHERE w.lock_token = p_token AND w.locked_until > clock_timestamp()
        RETURNING w.session_id INTO v_session;
    END IF;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF v_session IS NOT NULL THEN
        PERFORM __SCHEMA__.touch_session(v_session);
    END IF;
    IF p_completion IS NOT NULL THEN
        PERFORM __SCHEMA__.enqueue_orchestrator(ARRAY[p_completion_instance],
                                                ARRAY[p_completion], ARRAY[NULL::float8],
                                                ARRAY[NULL::float8]);
    END IF;
    RETURN true;
END;
$$;
