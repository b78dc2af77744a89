-- Move one work item to the dead-letter table.
-- $1 id, $2 max attempts, $3 reason, $4 error, $5 attempt count to record (NULL = row's).
WITH moved AS (
    DELETE FROM __SCHEMA__.worker_queue
    WHERE id = $1
    RETURNING *
)
INSERT INTO __SCHEMA__.dead_letters
    (queue, instance_id, execution_id, activity_id, attempt_count, max_attempts, reason, error,
     work_item, session_id, tag, enqueued_at)
SELECT 'worker', COALESCE(instance_id, ''), execution_id, activity_id,
       COALESCE($5::int, attempt_count), $2, $3, $4, work_item, session_id, tag, created_at
FROM moved
RETURNING id
