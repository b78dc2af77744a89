-- The work item of (instance, execution, activity) for a poison disposition, with
-- whether token $4 still holds a live lease on it.
SELECT id, COALESCE(lock_token = $4 AND locked_until > clock_timestamp(), false) AS ours_live
FROM __SCHEMA__.worker_queue
WHERE instance_id = $1 AND execution_id = $2 AND activity_id = $3
ORDER BY id
LIMIT 1
FOR UPDATE
