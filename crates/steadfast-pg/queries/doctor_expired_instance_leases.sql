-- doctor: instance leases that ran out but still carry a token. One row: expired, with_work
-- (messages still queued for the instance), stuck (with work and expired at least $1
-- seconds ago), oldest_s, and top (JSON: the five that expired first).
WITH n AS (SELECT clock_timestamp() AS t),
e AS (
    SELECT l.instance_id, l.locked_until,
           extract(epoch FROM (n.t - l.locked_until))::float8 AS expired_s,
           EXISTS (SELECT 1 FROM __SCHEMA__.orchestrator_queue AS q
                   WHERE q.instance_id = l.instance_id) AS has_work
    FROM __SCHEMA__.instance_leases AS l CROSS JOIN n
    WHERE l.lock_token IS NOT NULL AND l.locked_until <= n.t
)
SELECT count(*)::float8 AS expired,
       count(*) FILTER (WHERE has_work)::float8 AS with_work,
       count(*) FILTER (WHERE has_work AND expired_s >= $1)::float8 AS stuck,
       max(expired_s) AS oldest_s,
       (SELECT json_agg(x) FROM (SELECT instance_id, expired_s, has_work FROM e
                                 ORDER BY locked_until LIMIT 5) AS x) AS top
FROM e
