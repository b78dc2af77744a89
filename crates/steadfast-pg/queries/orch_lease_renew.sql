-- Extend a live orchestrator lease by $2 ms, but never past its turn deadline: $3 ms
-- after the lease began (claim.max_turn_duration; NULL = none). Refused once the deadline
-- has passed, so a turn that never ends loses its lease and is redelivered, counted.
-- renewed: whether it was extended; past_deadline: whether the token's lease is past its
-- deadline (the reason for a refusal; looked up only then). ready_at moves with the lease's
-- end where it must (functions/moved_ready_at.sql).
WITH renewed AS (
    UPDATE __SCHEMA__.instance_leases AS l
    SET (locked_until, ready_at) = (
            SELECT n.until,
                   __SCHEMA__.moved_ready_at(l.ready_at, l.attempt_count, l.locked_until, n.until)
            FROM (SELECT CASE
                    WHEN $3::float8 IS NULL
                        THEN clock_timestamp() + $2::float8 * interval '1 millisecond'
                    ELSE LEAST(clock_timestamp() + $2::float8 * interval '1 millisecond',
                               l.locked_at + $3::float8 * interval '1 millisecond')
                  END AS until) AS n)
    WHERE l.instance_id = __SCHEMA__.token_instance($1) AND l.lock_token = $1
      AND l.locked_until > clock_timestamp()
      AND ($3::float8 IS NULL
           OR l.locked_at + $3::float8 * interval '1 millisecond' > clock_timestamp())
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM renewed) AS renewed,
       CASE WHEN EXISTS (SELECT 1 FROM renewed) THEN false
            ELSE EXISTS (SELECT 1 FROM __SCHEMA__.instance_leases AS l
                         WHERE l.instance_id = __SCHEMA__.token_instance($1)
                           AND l.lock_token = $1 AND $3::float8 IS NOT NULL
                           AND l.locked_at + $3::float8 * interval '1 millisecond'
                               <= clock_timestamp())
       END AS past_deadline
