-- Only a live lease can complete its item.
DELETE FROM __SCHEMA__.worker_queue
WHERE lock_token = $1 AND locked_until > clock_timestamp()
RETURNING session_id
