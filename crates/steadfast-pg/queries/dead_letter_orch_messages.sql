-- Move an instance's handed-out messages (attempt_count > 0) to the dead-letter table.
-- $1 instance, $2 execution, $3 max attempts, $4 reason, $5 error.
WITH moved AS (
    DELETE FROM __SCHEMA__.orchestrator_queue
    WHERE instance_id = $1 AND attempt_count > 0
    RETURNING id, instance_id, work_item, attempt_count, created_at
)
INSERT INTO __SCHEMA__.dead_letters
    (queue, instance_id, execution_id, attempt_count, max_attempts, reason, error, work_item, enqueued_at)
SELECT 'orchestrator', instance_id, $2, attempt_count, $3, $4, $5, work_item, created_at
FROM moved
ORDER BY id
RETURNING id
