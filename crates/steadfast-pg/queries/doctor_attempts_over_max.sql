-- doctor: messages of both queues whose attempt_count is past max_attempts ($1). One row:
-- messages, instances, max_attempt_count, unsettled (all but attempts of exactly $1 + 1
-- under a live lease: the runtime failing them as poison right now), and top (JSON: the five
-- instances with the most attempts, with their lease state).
WITH n AS (SELECT clock_timestamp() AS t),
off AS (
    SELECT 'orchestrator' AS queue, q.instance_id, q.attempt_count,
           (l.lock_token IS NOT NULL) AS has_token, l.locked_until AS lease_until,
           (l.lock_token IS NOT NULL AND l.locked_until > n.t) AS leased
    FROM __SCHEMA__.orchestrator_queue AS q CROSS JOIN n
    LEFT JOIN __SCHEMA__.instance_leases AS l ON l.instance_id = q.instance_id
    WHERE q.attempt_count > $1
    UNION ALL
    SELECT 'worker', COALESCE(w.instance_id, '(unknown)'), w.attempt_count,
           (w.lock_token IS NOT NULL), w.locked_until,
           (w.lock_token IS NOT NULL AND w.locked_until > n.t)
    FROM __SCHEMA__.worker_queue AS w CROSS JOIN n
    WHERE w.attempt_count > $1
)
SELECT count(*)::float8 AS messages,
       count(DISTINCT (queue, instance_id))::float8 AS instances,
       max(attempt_count)::float8 AS max_attempt_count,
       count(*) FILTER (WHERE attempt_count > $1 + 1 OR NOT leased)::float8 AS unsettled,
       (SELECT json_agg(x) FROM (
            SELECT f.queue, f.instance_id, max(f.attempt_count) AS attempt_count, count(*) AS messages,
                   bool_or(f.leased) AS leased, bool_or(f.has_token) AS has_token,
                   extract(epoch FROM (min(n.t) - max(f.lease_until)))::float8 AS lease_expired_s
            FROM off AS f CROSS JOIN n
            GROUP BY f.queue, f.instance_id
            ORDER BY max(f.attempt_count) DESC, f.instance_id LIMIT 5) AS x) AS top
FROM off
