-- Tag every visible message of the leased instance with the new token and count the
-- attempt. Only the lease holder touches an instance's messages, so this never waits.
UPDATE __SCHEMA__.orchestrator_queue
SET lock_token = $2, attempt_count = attempt_count + 1
WHERE instance_id = $1 AND visible_at <= clock_timestamp()
RETURNING id, work_item, attempt_count
