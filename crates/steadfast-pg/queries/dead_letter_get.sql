SELECT id, queue, instance_id, execution_id, activity_id, attempt_count, max_attempts, reason, error, work_item, session_id, tag,
       (EXTRACT(EPOCH FROM enqueued_at) * 1000)::int8 AS enqueued_at_ms,
       (EXTRACT(EPOCH FROM dead_at) * 1000)::int8 AS dead_at_ms
FROM __SCHEMA__.dead_letters
WHERE id = $1
