SELECT COALESCE(max(attempt_count), 0)
FROM __SCHEMA__.orchestrator_queue
WHERE instance_id = $1
