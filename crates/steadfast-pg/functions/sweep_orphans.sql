-- The orphan sweep over the p_limit oldest waiting orchestrator messages (the baseline migration)
-- that it can act on now, for the instances whose lease row it can lock without waiting (a
-- missing lease row, left by a race with a deletion, is created first, see
-- instance_runnable_from):
-- * a message whose instance is runnable now becomes ready (its start was committed while
--   the message's enqueue ran, or a delayed start fell due), and its instance's ready_at
--   (the baseline migration) is lowered to it;
-- * a message visible for at least p_timeout_ms whose instance nothing has started
--   (runnable_from NULL) moves to the dead-letter table with reason
--   'orphaned' and error p_error; a lease row left without messages is removed (an
--   enqueue re-creates it).
-- One row per instance whose messages moved: instance, how many, their work-item kinds.
-- Messages it cannot act on yet (orphans younger than the timeout, events ahead of a start
-- that is not due) are passed over, not taken into the batch: otherwise enough of them at
-- the head of the waiting index would keep every later message out of every sweep. The
-- choice walks the waiting index past them; every later step reads rows by key.
CREATE OR REPLACE FUNCTION __SCHEMA__.sweep_orphans(
    p_timeout_ms float8, p_limit integer, p_error text
) RETURNS TABLE (orphan_instance text, orphan_messages integer, orphan_kinds text)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_ids bigint[];
    v_instances text[];
    v_runnable text[];
    v_unstarted text[];
BEGIN
    SELECT array_agg(d.id), array_agg(DISTINCT d.instance_id) INTO v_ids, v_instances
    FROM (
        SELECT q.id, q.instance_id
        FROM __SCHEMA__.orchestrator_queue AS q
        LEFT JOIN __SCHEMA__.instance_leases AS l ON l.instance_id = q.instance_id
        WHERE q.waiting
          AND (l.instance_id IS NULL
               OR l.runnable_from <= clock_timestamp()
               OR (l.runnable_from IS NULL
                   AND q.visible_at
                       <= clock_timestamp() - p_timeout_ms * interval '1 millisecond'))
        ORDER BY q.visible_at, q.id
        LIMIT p_limit
    ) AS d;
    IF v_ids IS NULL THEN
        RETURN;
    END IF;
    INSERT INTO __SCHEMA__.instance_leases (instance_id, runnable_from)
    SELECT i.id, __SCHEMA__.instance_runnable_from(i.id)
    FROM unnest(v_instances) AS i(id)
    -- A scalar subquery, not NOT EXISTS: a generic plan made while instance_leases was
    -- small hashed the whole table for that on every later sweep (tests/generic_plans.rs).
    WHERE (SELECT l.instance_id FROM __SCHEMA__.instance_leases AS l
           WHERE l.instance_id = i.id) IS NULL
    ORDER BY i.id
    ON CONFLICT (instance_id) DO NOTHING;
    SELECT array_agg(h.instance_id) FILTER (WHERE h.runnable_from <= clock_timestamp()),
           array_agg(h.instance_id) FILTER (WHERE h.runnable_from IS NULL)
    INTO v_runnable, v_unstarted
    FROM (
        SELECT l.instance_id, l.runnable_from
        FROM __SCHEMA__.instance_leases AS l
        WHERE l.instance_id = ANY (v_instances)
        FOR UPDATE SKIP LOCKED
    ) AS h;

    -- Ready now, so their instances are claim candidates from their visibility on (the
    -- lease rows are held here, so lowering ready_at waits for nothing).
    WITH readied AS (
        UPDATE __SCHEMA__.orchestrator_queue AS q
        SET waiting = false
        WHERE q.id = ANY (v_ids) AND q.instance_id = ANY (v_runnable)
        RETURNING q.instance_id, q.visible_at
    )
    UPDATE __SCHEMA__.instance_leases AS l
    SET ready_at = LEAST(COALESCE(l.ready_at, r.first_visible), r.first_visible)
    FROM (SELECT d.instance_id, min(d.visible_at) AS first_visible
          FROM readied AS d GROUP BY d.instance_id) AS r
    WHERE l.instance_id = r.instance_id AND l.instance_id = ANY (v_runnable);

    RETURN QUERY
    WITH moved AS (
        DELETE FROM __SCHEMA__.orchestrator_queue AS q
        WHERE q.id = ANY (v_ids)
          AND q.instance_id = ANY (v_unstarted)
          AND q.lock_token IS NULL
          AND q.visible_at <= clock_timestamp() - p_timeout_ms * interval '1 millisecond'
        RETURNING q.id, q.instance_id, q.work_item, q.attempt_count, q.created_at
    ), dead AS (
        INSERT INTO __SCHEMA__.dead_letters
            (queue, instance_id, attempt_count, reason, error, work_item, enqueued_at)
        SELECT 'orchestrator', m.instance_id, m.attempt_count, 'orphaned', p_error,
               m.work_item, m.created_at
        FROM moved AS m
        ORDER BY m.id
    )
    SELECT m.instance_id,
           count(*)::integer,
           string_agg(DISTINCT substring(m.work_item FROM '^\{"([A-Za-z]+)"'), ',')
    FROM moved AS m
    GROUP BY m.instance_id
    ORDER BY m.instance_id;

    DELETE FROM __SCHEMA__.instance_leases AS l
    WHERE l.instance_id = ANY (v_unstarted)
      AND l.runnable_from IS NULL
      AND NOT EXISTS (SELECT 1 FROM __SCHEMA__.orchestrator_queue AS q
                      WHERE q.instance_id = l.instance_id);
END;
$$;
