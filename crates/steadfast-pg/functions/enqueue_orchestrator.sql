-- Enqueue orchestrator messages. Per message: instance, work item, delay ms (NULL = now),
-- absolute visibility in epoch ms (a TimerFired's fire time, used when no delay is given).
--
-- Each target instance gets its lease row first (key order; an existing row is neither
-- changed nor locked, so an ack enqueueing to its parent cannot deadlock with the
-- parent's ack enqueueing to it). A start makes its instance runnable from the start's
-- visibility on (instance_leases.runnable_from, the baseline migration): only then, and only for
-- an instance not runnable earlier, is the existing row updated.
--
-- A message that becomes visible before its instance is runnable is stored as waiting:
-- outside the claim's scan, so it costs no claim (see the baseline migration). A start
-- committed concurrently, after the last statement here read runnable_from, leaves such a
-- message waiting although its instance is runnable: the instance's next claim takes it
-- along, and the orphan sweep makes it ready (functions/sweep_orphans.sql).
--
-- A ready message makes its instance a claim candidate (the baseline migration) through
-- instance_leases.ready_at, never waiting for a lock: a new lease row is created with it;
-- an existing one is lowered (FOR NO KEY UPDATE SKIP LOCKED), or found low enough while
-- this holds the instance's fence shared (functions/ready_at_fence_key.sql, taken first,
-- before anything here reads a lease row, and held until this commits), so that
-- settle_ready_at cannot raise it past this message meanwhile. A row that is locked
-- against lowering and whose fence this does not hold (or a row gone, deleted
-- concurrently) gets a ready_hints row instead, which the claim scans too. The fence is
-- taken only by a call with at most 16 messages (each fence is an entry in the server's
-- shared lock table until the commit); a larger one leaves hints instead.
--
-- Its statements are planned once per connection (force_generic_plan, as every function
-- here): PostgreSQL 15 would otherwise plan each of them again on every call, since a
-- custom plan knows the arrays' sizes and a generic one does not. So every lease row is
-- reached through its key (= ANY of the array, or a subquery per message), which a
-- generic plan takes as an index condition whatever size it assumes for the arrays.
--
-- PL/pgSQL, not SQL: its statements' plans are cached per connection, while an SQL
-- function is planned again on every call. Written as one SQL statement this function cost
-- bench/'s trivial orchestration 10-14 % (best of 1-32 dispatchers: 212-223/s against
-- 245-249/s before runnable_from and waiting existed); as it is, 261-266/s (release, same
-- machine and runs).
CREATE OR REPLACE FUNCTION __SCHEMA__.enqueue_orchestrator(
    p_instances text[], p_items text[], p_delays float8[], p_visible float8[]
) RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_visible timestamptz[];
    v_starts boolean[];
    v_created text[];
    v_ready_instances text[];
    v_ready_at timestamptz[];
    v_fenced text[];
BEGIN
    -- First, before anything here reads a lease row: the target instances' fences.
    SELECT array_agg(COALESCE(to_timestamp(t.visible_at_ms / 1000.0),
                              clock_timestamp()
                                  + COALESCE(t.delay_ms, 0) * interval '1 millisecond')
                     ORDER BY t.ord),
           array_agg(__SCHEMA__.starts_instance(t.work_item) ORDER BY t.ord),
           array_agg(t.instance_id)
               FILTER (WHERE CASE WHEN cardinality(p_instances) <= 16
                                  THEN pg_try_advisory_xact_lock_shared(
                                           __SCHEMA__.ready_at_fence_key(t.instance_id))
                                  ELSE false END)
    INTO v_visible, v_starts, v_fenced
    FROM unnest(p_instances, p_items, p_delays, p_visible) WITH ORDINALITY
         AS t(instance_id, work_item, delay_ms, visible_at_ms, ord);

    -- A new row's messages are ready from its first start on (as the insert below decides).
    -- An instance with no instance row has no execution, so its pin is known: none. (A
    -- scalar subquery, not EXISTS: a generic plan made while `instances` was small turned
    -- EXISTS into one hashed read of the whole table per call.)
    WITH created AS (
        INSERT INTO __SCHEMA__.instance_leases (instance_id, runnable_from, ready_at, pin_known)
        SELECT g.instance_id, g.first_start, g.first_ready,
               (SELECT i.instance_id FROM __SCHEMA__.instances AS i
                WHERE i.instance_id = g.instance_id) IS NULL
        FROM (
            SELECT t.instance_id, s.first_start,
                   min(t.visible_at) FILTER (WHERE t.visible_at >= s.first_start)
                       AS first_ready
            FROM unnest(p_instances, v_visible) AS t(instance_id, visible_at)
            JOIN (
                SELECT u.instance_id, min(u.visible_at) FILTER (WHERE u.starts) AS first_start
                FROM unnest(p_instances, v_visible, v_starts) AS u(instance_id, visible_at, starts)
                GROUP BY u.instance_id
            ) AS s ON s.instance_id = t.instance_id
            GROUP BY t.instance_id, s.first_start
        ) AS g
        ORDER BY g.instance_id
        ON CONFLICT (instance_id) DO NOTHING
        RETURNING instance_id
    )
    SELECT array_agg(c.instance_id) INTO v_created FROM created AS c;

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
          AND l.instance_id = ANY (p_instances)
          AND (l.runnable_from IS NULL OR s.first_start < l.runnable_from);
    END IF;

    WITH inserted AS (
        INSERT INTO __SCHEMA__.orchestrator_queue (instance_id, work_item, visible_at, waiting)
        SELECT t.instance_id, t.work_item, t.visible_at,
               NOT COALESCE((SELECT l.runnable_from <= t.visible_at
                             FROM __SCHEMA__.instance_leases AS l
                             WHERE l.instance_id = t.instance_id), false)
        FROM unnest(p_instances, p_items, v_visible) WITH ORDINALITY
             AS t(instance_id, work_item, visible_at, ord)
        ORDER BY t.ord
        RETURNING instance_id, visible_at, waiting
    )
    SELECT array_agg(r.instance_id ORDER BY r.instance_id), array_agg(r.first ORDER BY r.instance_id)
    INTO v_ready_instances, v_ready_at
    FROM (
        SELECT i.instance_id, min(i.visible_at) AS first
        FROM inserted AS i
        WHERE NOT i.waiting AND i.instance_id <> ALL (COALESCE(v_created, '{}'))
        GROUP BY i.instance_id
    ) AS r;

    IF v_ready_instances IS NOT NULL THEN
        WITH wanted AS (
            SELECT w.instance_id, w.ready_at
            FROM unnest(v_ready_instances, v_ready_at) AS w(instance_id, ready_at)
        ), lowerable AS MATERIALIZED (
            SELECT l.instance_id
            FROM __SCHEMA__.instance_leases AS l
            JOIN wanted AS w ON w.instance_id = l.instance_id
            WHERE l.instance_id = ANY (v_ready_instances)
              AND (l.ready_at IS NULL OR l.ready_at > w.ready_at)
            ORDER BY l.instance_id
            FOR NO KEY UPDATE OF l SKIP LOCKED
        ), lowered AS (
            UPDATE __SCHEMA__.instance_leases AS l
            SET ready_at = LEAST(COALESCE(l.ready_at, w.ready_at), w.ready_at)
            FROM wanted AS w
            WHERE l.instance_id = w.instance_id
              AND l.instance_id = ANY (v_ready_instances)
              AND l.instance_id IN (SELECT b.instance_id FROM lowerable AS b)
            RETURNING l.instance_id
        ), held AS MATERIALIZED (
            SELECT l.instance_id
            FROM __SCHEMA__.instance_leases AS l
            JOIN wanted AS w ON w.instance_id = l.instance_id
            WHERE l.instance_id = ANY (v_ready_instances) AND l.instance_id = ANY (v_fenced)
              AND l.ready_at <= w.ready_at
        )
        INSERT INTO __SCHEMA__.ready_hints (instance_id, visible_at)
        SELECT w.instance_id, w.ready_at
        FROM wanted AS w
        WHERE w.instance_id NOT IN (SELECT d.instance_id FROM lowered AS d)
          AND w.instance_id NOT IN (SELECT k.instance_id FROM held AS k);
    END IF;
END;
$$;
