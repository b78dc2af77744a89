-- Enqueue activity work items (per item: work item, instance, execution, activity id,
-- session, tag), handing some out at once. An item with a token prefix is stored claimed,
-- as claim_work_item would have claimed it: its lock token is the prefix and its id
-- (functions/token_work_item.sql), leased for its p_lock_ms from now with its first
-- attempt counted and its backoff jitter set. That is one write where an enqueue and a
-- claim make two, and no claim statement: it is for a worker fetch of the enqueuing
-- process that is already waiting (src/handoff.rs). Returns the lock tokens in item order
-- (NULL for an item left to the claims). Prefixes, lock ms and jitters NULL: none
-- handed out.
CREATE OR REPLACE FUNCTION __SCHEMA__.enqueue_work_items(
    p_items text[], p_instances text[], p_executions bigint[], p_activities bigint[],
    p_sessions text[], p_tags text[],
    p_token_prefixes text[], p_lock_ms float8[], p_jitters real[]
) RETURNS text[] LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_tokens text[];
BEGIN
    -- The ids are drawn first (a CTE calling nextval is evaluated once), so that a
    -- token can name its row in the same write.
    WITH numbered AS (
        SELECT nextval('__SCHEMA__.worker_queue_id_seq') AS id, t.*
        FROM unnest(p_items, p_instances, p_executions, p_activities, p_sessions, p_tags,
                    p_token_prefixes, p_lock_ms, p_jitters) WITH ORDINALITY
             AS t(work_item, instance_id, execution_id, activity_id, session_id, tag,
                  prefix, lock_ms, jitter, ord)
    ), inserted AS (
        INSERT INTO __SCHEMA__.worker_queue
            (id, work_item, instance_id, execution_id, activity_id, session_id, tag,
             lock_token, locked_at, locked_until, attempt_count, backoff_jitter)
        SELECT n.id, n.work_item, n.instance_id, n.execution_id, n.activity_id,
               n.session_id, n.tag,
               n.prefix || n.id,
               CASE WHEN n.prefix IS NOT NULL THEN clock_timestamp() END,
               CASE WHEN n.prefix IS NOT NULL
                    THEN clock_timestamp() + n.lock_ms * interval '1 millisecond' END,
               CASE WHEN n.prefix IS NOT NULL THEN 1 ELSE 0 END,
               COALESCE(n.jitter, 0)
        FROM numbered AS n
        ORDER BY n.ord
        RETURNING id, lock_token
    )
    SELECT array_agg(i.lock_token ORDER BY n.ord) INTO v_tokens
    FROM inserted AS i
    JOIN numbered AS n ON n.id = i.id;
    RETURN v_tokens;
END;
$$;
