-- Highest attempt count of one instance's queued messages (0 when none is queued).
SELECT coalesce(max(attempt_count), 0)::int8 FROM __SCHEMA__.orchestrator_queue
WHERE instance_id = $1
