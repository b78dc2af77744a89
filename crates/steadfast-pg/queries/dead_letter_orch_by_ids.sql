-- Move specific orchestrator messages (e.g. undecodable ones) to the dead-letter table.
-- $1 ids, $2 reason, $3 error.
WITH moved AS (
    DELETE FROM __SCHEMA__.orchestrator_queue
    WHERE id = ANY($1::int8[])
    RETURNING id, instance_id, work_item, attempt_count, created_at
)
INSERT INTO __SCHEMA__.dead_letters
    (queue, instance_id, attempt_count, reason, error, work_item, enqueued_at)
SELECT 'orchestrator', instance_id, attempt_count, $2, $3, work_item, created_at
FROM moved
ORDER BY id
RETURNING id
