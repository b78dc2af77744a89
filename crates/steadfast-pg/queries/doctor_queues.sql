-- doctor: both queues by the database clock; an orchestrator message is leased while its
-- instance's lease lives, a work item while its own lease does. One row per queue
-- ('orchestrator', 'worker'): total, ready, delayed, leased, instances, max_attempt_count,
-- and oldest (JSON: id, instance_id, attempt_count and age_s of the oldest ready message;
-- NULL when none is ready).
WITH n AS (SELECT clock_timestamp() AS t),
r AS (
    SELECT 'orchestrator' AS queue, q.id, q.instance_id, q.visible_at, q.attempt_count,
           (l.lock_token IS NOT NULL AND l.locked_until > n.t) AS leased
    FROM __SCHEMA__.orchestrator_queue AS q CROSS JOIN n
    LEFT JOIN __SCHEMA__.instance_leases AS l ON l.instance_id = q.instance_id
    UNION ALL
    SELECT 'worker', w.id, w.instance_id, w.visible_at, w.attempt_count,
           (w.lock_token IS NOT NULL AND w.locked_until > n.t)
    FROM __SCHEMA__.worker_queue AS w CROSS JOIN n
),
oldest AS (
    SELECT DISTINCT ON (r.queue) r.queue, r.id::text AS id, r.instance_id, r.attempt_count,
           extract(epoch FROM (n.t - r.visible_at))::float8 AS age_s
    FROM r CROSS JOIN n
    WHERE NOT r.leased AND r.visible_at <= n.t
    ORDER BY r.queue, r.visible_at, r.id
)
SELECT k.queue,
       count(r.id)::float8 AS total,
       count(r.id) FILTER (WHERE NOT r.leased AND r.visible_at <= n.t)::float8 AS ready,
       count(r.id) FILTER (WHERE NOT r.leased AND r.visible_at > n.t)::float8 AS delayed,
       count(r.id) FILTER (WHERE r.leased)::float8 AS leased,
       count(DISTINCT r.instance_id)::float8 AS instances,
       max(r.attempt_count)::float8 AS max_attempt_count,
       (SELECT json_build_object('id', o.id, 'instance_id', o.instance_id,
                                 'attempt_count', o.attempt_count, 'age_s', o.age_s)
        FROM oldest AS o WHERE o.queue = k.queue) AS oldest
FROM (VALUES ('orchestrator'), ('worker')) AS k(queue)
CROSS JOIN n
LEFT JOIN r ON r.queue = k.queue
GROUP BY k.queue, n.t
ORDER BY k.queue
