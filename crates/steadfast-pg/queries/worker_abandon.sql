-- $1 token, $2 delay ms (NULL = visible now), $3 ignore attempt.
UPDATE __SCHEMA__.worker_queue
SET lock_token = NULL,
    locked_until = NULL,
    backoff_jitter = 0,
    visible_at = clock_timestamp() + COALESCE($2::float8, 0) * interval '1 millisecond',
    attempt_count = CASE WHEN $3 THEN GREATEST(attempt_count - 1, 0) ELSE attempt_count END
WHERE id = __SCHEMA__.token_work_item($1) AND lock_token = $1
