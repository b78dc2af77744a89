UPDATE __SCHEMA__.worker_queue
SET locked_until = clock_timestamp() + $2::float8 * interval '1 millisecond'
WHERE lock_token = $1 AND locked_until > clock_timestamp()
RETURNING session_id
