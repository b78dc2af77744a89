-- Claim or refresh a session for $2; refused (no row) while another owner's lease lives.
INSERT INTO __SCHEMA__.sessions (session_id, worker_id, locked_until, last_activity_at)
VALUES ($1, $2, clock_timestamp() + $3::float8 * interval '1 millisecond', clock_timestamp())
ON CONFLICT (session_id) DO UPDATE
SET worker_id = EXCLUDED.worker_id,
    locked_until = EXCLUDED.locked_until,
    last_activity_at = EXCLUDED.last_activity_at
WHERE __SCHEMA__.sessions.locked_until <= clock_timestamp()
   OR __SCHEMA__.sessions.worker_id = EXCLUDED.worker_id
RETURNING session_id
