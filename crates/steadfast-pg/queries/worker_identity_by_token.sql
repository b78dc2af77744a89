-- What a refused worker ack was about, for its diagnostic: the row still carries the token
-- when its lease expired (not when it was superseded or cancelled).
SELECT instance_id, execution_id, attempt_count
FROM __SCHEMA__.worker_queue
WHERE lock_token = $1
