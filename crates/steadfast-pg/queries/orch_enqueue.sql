-- Enqueue orchestrator messages in one statement, creating each target instance's
-- lease row first (in key order, so concurrent enqueues cannot deadlock).
-- Per message: $1 instance, $2 work item, $3 delay ms (NULL = now),
-- $4 absolute visibility in epoch ms (a TimerFired's fire time, when no delay is given).
WITH items AS (
    SELECT *
    FROM unnest($1::text[], $2::text[], $3::float8[], $4::float8[]) WITH ORDINALITY
         AS t(instance_id, work_item, delay_ms, visible_at_ms, ord)
), leases AS (
    INSERT INTO __SCHEMA__.instance_leases (instance_id)
    SELECT DISTINCT instance_id FROM items ORDER BY instance_id
    ON CONFLICT (instance_id) DO NOTHING
)
INSERT INTO __SCHEMA__.orchestrator_queue (instance_id, work_item, visible_at)
SELECT instance_id,
       work_item,
       COALESCE(to_timestamp(visible_at_ms / 1000.0),
                clock_timestamp() + COALESCE(delay_ms, 0) * interval '1 millisecond')
FROM items
ORDER BY ord
