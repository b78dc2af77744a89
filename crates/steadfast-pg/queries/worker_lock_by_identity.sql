-- The work item of (instance, execution, activity) that token $4 was issued on, for a
-- poison disposition, with whether that lease is still live. A row claimed again since
-- (superseded), or of a re-created instance, does not carry the token: no row.
SELECT id, COALESCE(locked_until > clock_timestamp(), false) AS ours_live
FROM __SCHEMA__.worker_queue
WHERE id = __SCHEMA__.token_work_item($4) AND lock_token = $4
  AND instance_id = $1 AND execution_id = $2 AND activity_id = $3
ORDER BY id
LIMIT 1
FOR UPDATE
