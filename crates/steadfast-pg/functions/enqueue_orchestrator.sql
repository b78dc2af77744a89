-- Enqueue orchestrator messages. Per message: instance, work item, delay ms (NULL = now),
-- absolute visibility in epoch ms (a TimerFired's fire time, used when no delay is given).
--
-- Each target instance gets its lease row first (key order; an existing row is neither
-- changed nor locked, so an ack enqueueing to its parent cannot deadlock with the
-- parent's ack enqueueing to it). A start makes its instance runnable from the start's
-- visibility on (instance_leases.runnable_from, migration 0006): only then, and only for
-- an instance not runnable earlier, is the existing row updated.
--
-- A message that becomes visible before its instance is runnable is stored as waiting:
-- outside the claim's ready index, so it costs no claim (see migration 0006). A start
-- committed concurrently, after this statement read runnable_from, leaves such a message
-- waiting although its instance is runnable: the instance's next claim takes it along,
-- and the orphan sweep makes it ready (functions/sweep_orphans.sql).
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
        RETURNING instance_id, runnable_from
    ), started AS (
        UPDATE __SCHEMA__.instance_leases AS l
        SET runnable_from = t.first_start
        FROM targets AS t
        WHERE l.instance_id = t.instance_id
          AND t.first_start IS NOT NULL
          AND (l.runnable_from IS NULL OR t.first_start < l.runnable_from)
        RETURNING l.instance_id, l.runnable_from
    ), runnable AS (
        -- Each target's runnable_from once this statement is done (the plain read sees
        -- the rows as they were before it).
        SELECT t.instance_id,
               COALESCE(s.runnable_from, c.runnable_from,
                        (SELECT l.runnable_from FROM __SCHEMA__.instance_leases AS l
                         WHERE l.instance_id = t.instance_id)) AS runnable_from
        FROM targets AS t
        LEFT JOIN created AS c ON c.instance_id = t.instance_id
        LEFT JOIN started AS s ON s.instance_id = t.instance_id
    )
    INSERT INTO __SCHEMA__.orchestrator_queue (instance_id, work_item, visible_at, waiting)
    SELECT i.instance_id, i.work_item, i.visible_at,
           NOT COALESCE(r.runnable_from <= i.visible_at, false)
    FROM items AS i
    JOIN runnable AS r ON r.instance_id = i.instance_id
    ORDER BY i.ord
$$;
