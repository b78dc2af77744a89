-- Enqueue orchestrator messages. Per message: instance, work item, delay ms (NULL = now),
-- absolute visibility in epoch ms (a TimerFired's fire time, used when no delay is given).
--
-- Each target instance gets its lease row first (key order; an existing row is neither
-- changed nor locked, so an ack enqueueing to its parent cannot deadlock with the
-- parent's ack enqueueing to it). A start makes its instance runnable from the start's
-- visibility on (instance_leases.runnable_from, migration 0006): only then, and only for
-- an instance not runnable earlier, is the existing row updated. Any other message
-- leaves runnable_from as it is, so a message to an instance nothing has started waits
-- for a start and never costs a claim.
CREATE OR REPLACE FUNCTION __SCHEMA__.enqueue_orchestrator(
    p_instances text[], p_items text[], p_delays float8[], p_visible float8[]
) RETURNS void LANGUAGE sql AS $$
    WITH items AS (
        SELECT t.instance_id, t.work_item, t.ord,
               COALESCE(to_timestamp(t.visible_at_ms / 1000.0),
                        clock_timestamp() + COALESCE(t.delay_ms, 0) * interval '1 millisecond')
                   AS visible_at
        FROM unnest(p_instances, p_items, p_delays, p_visible) WITH ORDINALITY
             AS t(instance_id, work_item, delay_ms, visible_at_ms, ord)
    ), targets AS (
        SELECT i.instance_id,
               min(i.visible_at) FILTER (WHERE __SCHEMA__.starts_instance(i.work_item))
                   AS first_start
        FROM items AS i
        GROUP BY i.instance_id
    ), created AS (
        INSERT INTO __SCHEMA__.instance_leases (instance_id, runnable_from)
        SELECT t.instance_id, t.first_start FROM targets AS t ORDER BY t.instance_id
        ON CONFLICT (instance_id) DO NOTHING
    ), started AS (
        UPDATE __SCHEMA__.instance_leases AS l
        SET runnable_from = t.first_start
        FROM targets AS t
        WHERE l.instance_id = t.instance_id
          AND t.first_start IS NOT NULL
          AND (l.runnable_from IS NULL OR t.first_start < l.runnable_from)
    )
    INSERT INTO __SCHEMA__.orchestrator_queue (instance_id, work_item, visible_at)
    SELECT i.instance_id, i.work_item, i.visible_at
    FROM items AS i
    ORDER BY i.ord
$$;
