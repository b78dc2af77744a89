-- Only the rows this token claimed are delayed or have their attempt given back.
-- $1 token, $2 delay ms (NULL = keep visibility), $3 ignore attempt.
UPDATE __SCHEMA__.orchestrator_queue
SET visible_at = CASE WHEN $2::float8 IS NULL THEN visible_at
                      ELSE clock_timestamp() + $2::float8 * interval '1 millisecond' END,
    attempt_count = CASE WHEN $3 THEN GREATEST(attempt_count - 1, 0) ELSE attempt_count END
WHERE __SCHEMA__.tagged_by_claim(
          instance_id, visible_at, lock_token, __SCHEMA__.token_instance($1), $1,
          (SELECT l.tagged_until FROM __SCHEMA__.instance_leases AS l
           WHERE l.instance_id = __SCHEMA__.token_instance($1) AND l.lock_token = $1))
