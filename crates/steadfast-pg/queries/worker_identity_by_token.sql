-- What a refused worker ack was about, for its diagnostic: the row still carries the token
-- when its lease expired (not when it was superseded or cancelled).
SELECT instance_id, execution_id, attempt_count
FROM __SCHEMA__.worker_queue
WHERE id = __SCHEMA__.token_work_item($1) AND lock_token = $1
