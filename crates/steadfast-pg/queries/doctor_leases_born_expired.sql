-- doctor: instance leases stamped already expired (locked_until <= locked_at: a claim that
-- computed its lease from a stale time). One row: count, and top (JSON: the five newest,
-- with their lease length in milliseconds).
WITH b AS (
    SELECT instance_id, locked_at,
           (extract(epoch FROM (locked_until - locked_at)) * 1000)::float8 AS lease_ms
    FROM __SCHEMA__.instance_leases
    WHERE lock_token IS NOT NULL AND locked_until <= locked_at
)
SELECT count(*)::float8 AS count,
       (SELECT json_agg(x) FROM (SELECT instance_id, lease_ms FROM b
                                 ORDER BY locked_at DESC LIMIT 5) AS x) AS top
FROM b
