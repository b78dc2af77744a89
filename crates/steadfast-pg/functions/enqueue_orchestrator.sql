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
-- committed concurrently, after the last statement here read runnable_from, leaves such a
-- message waiting although its instance is runnable: the instance's next claim takes it
-- along, and the orphan sweep makes it ready (functions/sweep_orphans.sql).
--
-- PL/pgSQL, not SQL: its statements' plans are cached per connection, while an SQL
-- function is planned again on every call. Written as one SQL statement this function cost
-- bench/'s trivial orchestration 10-14 % (best of 1-32 dispatchers: 212-223/s against
-- 245-249/s before migration 0006); as it is, 261-266/s (release, same machine and runs).
CREATE OR REPLACE FUNCTION __SCHEMA__.enqueue_orchestrator(
    p_instances text[], p_items text[], p_delays float8[], p_visible float8[]
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_visible timestamptz[];
    v_starts boolean[];
BEGIN
    SELECT array_agg(COALESCE(to_timestamp(t.visible_at_ms / 1000.0),
                              clock_timestamp()
                                  + COALESCE(t.delay_ms, 0) * interval '1 millisecond')
                     ORDER BY t.ord),
           array_agg(__SCHEMA__.starts_instance(t.work_item) ORDER BY t.ord)
    INTO v_visible, v_starts
    FROM unnest(p_items, p_delays, p_visible) WITH ORDINALITY
         AS t(work_item, delay_ms, visible_at_ms, ord);

    INSERT INTO __SCHEMA__.instance_leases (instance_id, runnable_from)
    SELECT t.instance_id, min(t.visible_at) FILTER (WHERE t.starts)
    FROM unnest(p_instances, v_visible, v_starts) AS t(instance_id, visible_at, starts)
    GROUP BY t.instance_id
    ORDER BY t.instance_id
    ON CONFLICT (instance_id) DO NOTHING;

    IF true = ANY (v_starts) THEN
        UPDATE __SCHEMA__.instance_leases AS l
        SET runnable_from = s.first_start
        FROM (
            SELECT t.instance_id, min(t.visible_at) AS first_start
            FROM unnest(p_instances, v_visible, v_starts) AS t(instance_id, visible_at, starts)
            WHERE t.starts
            GROUP BY t.instance_id
        ) AS s
        WHERE l.instance_id = s.instance_id
          AND (l.runnable_from IS NULL OR s.first_start < l.runnable_from);
    END IF;

    INSERT INTO __SCHEMA__.orchestrator_queue (instance_id, work_item, visible_at, waiting)
    SELECT t.instance_id, t.work_item, t.visible_at,
           NOT COALESCE(l.runnable_from <= t.visible_at, false)
    FROM unnest(p_instances, p_items, v_visible) WITH ORDINALITY
         AS t(instance_id, work_item, visible_at, ord)
    LEFT JOIN __SCHEMA__.instance_leases AS l ON l.instance_id = t.instance_id
    ORDER BY t.ord;
END;
$$;
