-- doctor: leases alive now by the database clock. One row: live (instance leases),
-- worker_live (work item leases), and the longest-held instance lease: instance_id, held_s,
-- remaining_s (NULL when none is live).
WITH n AS (SELECT clock_timestamp() AS t),
live AS (
    SELECT l.instance_id, l.locked_at, l.locked_until
    FROM __SCHEMA__.instance_leases AS l CROSS JOIN n
    WHERE l.lock_token IS NOT NULL AND l.locked_until > n.t
)
SELECT (SELECT count(*) FROM live)::float8 AS live,
       (SELECT count(*) FROM __SCHEMA__.worker_queue AS w
        WHERE w.lock_token IS NOT NULL AND w.locked_until > n.t)::float8 AS worker_live,
       o.instance_id,
       extract(epoch FROM (n.t - o.locked_at))::float8 AS held_s,
       extract(epoch FROM (o.locked_until - n.t))::float8 AS remaining_s
FROM n LEFT JOIN LATERAL (SELECT * FROM live ORDER BY locked_at LIMIT 1) AS o ON true
