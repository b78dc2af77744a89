-- Extend a live work-item lease by $2 ms, but never past its activity deadline: $3 ms after
-- the lease began (claim.max_activity_duration; NULL = none; rows leased before schema
-- version 8 have no start and no deadline). Refused once the deadline has passed, so an
-- activity that never ends loses its lease and is redelivered, counted. No row: refused;
-- past_deadline says whether the deadline was the reason (looked up only then).
WITH renewed AS (
    UPDATE __SCHEMA__.worker_queue AS w
    SET locked_until = CASE
            WHEN $3::float8 IS NULL OR w.locked_at IS NULL
                THEN clock_timestamp() + $2::float8 * interval '1 millisecond'
            ELSE LEAST(clock_timestamp() + $2::float8 * interval '1 millisecond',
                       w.locked_at + $3::float8 * interval '1 millisecond')
        END
    WHERE w.id = __SCHEMA__.token_work_item($1) AND w.lock_token = $1
      AND w.locked_until > clock_timestamp()
      AND ($3::float8 IS NULL OR w.locked_at IS NULL
           OR w.locked_at + $3::float8 * interval '1 millisecond' > clock_timestamp())
    RETURNING w.session_id
)
SELECT EXISTS (SELECT 1 FROM renewed) AS renewed,
       (SELECT r.session_id FROM renewed AS r) AS session_id,
       CASE WHEN EXISTS (SELECT 1 FROM renewed) THEN false
            ELSE EXISTS (SELECT 1 FROM __SCHEMA__.worker_queue AS w
                         WHERE w.id = __SCHEMA__.token_work_item($1)
                           AND w.lock_token = $1 AND $3::float8 IS NOT NULL
                           AND w.locked_at + $3::float8 * interval '1 millisecond'
                               <= clock_timestamp())
       END AS past_deadline
