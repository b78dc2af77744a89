-- Move to the dead-letter table, with reason 'orphaned', the orchestrator messages that
-- have been visible for at least $1 ms while nothing started their instance
-- (instance_leases.runnable_from IS NULL). Looks at up to $2 such instances, skipping any
-- whose lease row another transaction holds; a lease row left without messages is
-- removed (an enqueue re-creates it). $3 is the dead letters' error text.
-- One row per instance whose messages moved: instance, count, work-item kinds.
WITH waiting AS (
    SELECT l.instance_id
    FROM __SCHEMA__.instance_leases AS l
    WHERE l.runnable_from IS NULL
    ORDER BY l.instance_id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), moved AS (
    DELETE FROM __SCHEMA__.orchestrator_queue AS q
    USING waiting AS w
    WHERE q.instance_id = w.instance_id
      AND q.lock_token IS NULL
      AND q.visible_at <= clock_timestamp() - $1 * interval '1 millisecond'
    RETURNING q.id, q.instance_id, q.work_item, q.attempt_count, q.created_at
), dead AS (
    INSERT INTO __SCHEMA__.dead_letters
        (queue, instance_id, attempt_count, reason, error, work_item, enqueued_at)
    SELECT 'orchestrator', m.instance_id, m.attempt_count, 'orphaned', $3, m.work_item,
           m.created_at
    FROM moved AS m
    ORDER BY m.id
), emptied AS (
    DELETE FROM __SCHEMA__.instance_leases AS l
    USING waiting AS w
    WHERE l.instance_id = w.instance_id
      AND NOT EXISTS (SELECT 1 FROM __SCHEMA__.orchestrator_queue AS q
                      WHERE q.instance_id = w.instance_id
                        AND q.id NOT IN (SELECT m.id FROM moved AS m))
)
SELECT m.instance_id,
       count(*)::int4 AS messages,
       string_agg(DISTINCT substring(m.work_item FROM '^\{"([A-Za-z]+)"'), ',') AS kinds
FROM moved AS m
GROUP BY m.instance_id
ORDER BY m.instance_id
