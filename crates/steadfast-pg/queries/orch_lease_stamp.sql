-- Start the lease now, by the database clock, as the last step of the claim.
-- $1 instance, $2 token, $3 lock timeout ms, $4 attempt count, $5 backoff jitter.
UPDATE __SCHEMA__.instance_leases
SET lock_token = $2,
    locked_at = clock_timestamp(),
    locked_until = clock_timestamp() + $3::float8 * interval '1 millisecond',
    attempt_count = $4,
    backoff_jitter = $5
WHERE instance_id = $1
RETURNING (EXTRACT(EPOCH FROM (locked_until - clock_timestamp())) * 1000)::float8 AS remaining_ms
