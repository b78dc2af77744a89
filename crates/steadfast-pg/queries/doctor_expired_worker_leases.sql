-- doctor: work items whose lease ran out but still carry a token. One row: expired, stuck
-- (expired at least $1 seconds ago), oldest_s, and top (JSON: the five that expired first).
WITH n AS (SELECT clock_timestamp() AS t),
e AS (
    SELECT w.id, w.instance_id, w.activity_id, w.attempt_count, w.locked_until,
           extract(epoch FROM (n.t - w.locked_until))::float8 AS expired_s
    FROM __SCHEMA__.worker_queue AS w CROSS JOIN n
    WHERE w.lock_token IS NOT NULL AND w.locked_until <= n.t
)
SELECT count(*)::float8 AS expired,
       count(*) FILTER (WHERE expired_s >= $1)::float8 AS stuck,
       max(expired_s) AS oldest_s,
       (SELECT json_agg(x) FROM (SELECT id::text AS id, instance_id, activity_id, attempt_count, expired_s
                                 FROM e ORDER BY locked_until LIMIT 5) AS x) AS top
FROM e
