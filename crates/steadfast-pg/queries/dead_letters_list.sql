-- $1 instance (NULL = all), $2 after id (keyset paging), $3 limit.
SELECT id, queue, instance_id, execution_id, activity_id, attempt_count, max_attempts, reason, error, work_item, session_id, tag,
       (EXTRACT(EPOCH FROM enqueued_at) * 1000)::int8 AS enqueued_at_ms,
       (EXTRACT(EPOCH FROM dead_at) * 1000)::int8 AS dead_at_ms
FROM __SCHEMA__.dead_letters
WHERE ($1::text IS NULL OR instance_id = $1) AND id > $2
ORDER BY id
LIMIT $3
