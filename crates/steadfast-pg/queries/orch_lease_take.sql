-- Take the instance's lease row if it is free (or expired and past its backoff).
-- SKIP LOCKED: a row held by any other transaction is skipped, never waited for.
-- $1 instance, $2 backoff base ms, $3 backoff cap ms.
SELECT l.attempt_count
FROM __SCHEMA__.instance_leases AS l
WHERE l.instance_id = $1
  AND (l.lock_token IS NULL
       OR l.locked_until
       + LEAST($3::float8, $2::float8 * power(2, LEAST(GREATEST(l.attempt_count, 1) - 1, 62)))
         * (1 + l.backoff_jitter) * interval '1 millisecond' <= clock_timestamp())
FOR UPDATE SKIP LOCKED
