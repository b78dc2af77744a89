-- doctor: one sampling tick. One row: now_ms (the database clock, epoch ms), orch and worker
-- (JSON arrays of [id, visible_at epoch ms] of each queue's oldest ready messages, at most
-- $1), and claims (JSON array of [lock_token, instance_id, wait_ms] of the instance leases
-- stamped since $2 epoch ms; wait_ms is the lease stamp minus the visibility of its
-- first-delivery messages, NULL when it holds only redeliveries).
WITH n AS (SELECT x.t, (extract(epoch FROM x.t) * 1000)::float8 AS ms
           FROM (SELECT clock_timestamp() AS t) AS x),
ro AS (
    SELECT q.id, (extract(epoch FROM q.visible_at) * 1000)::float8 AS vis_ms
    FROM __SCHEMA__.orchestrator_queue AS q CROSS JOIN n
    LEFT JOIN __SCHEMA__.instance_leases AS l ON l.instance_id = q.instance_id
    WHERE q.visible_at <= n.t AND NOT (l.lock_token IS NOT NULL AND l.locked_until > n.t)
    ORDER BY q.visible_at, q.id LIMIT $1
),
rw AS (
    SELECT w.id, (extract(epoch FROM w.visible_at) * 1000)::float8 AS vis_ms
    FROM __SCHEMA__.worker_queue AS w CROSS JOIN n
    WHERE w.visible_at <= n.t AND NOT (w.lock_token IS NOT NULL AND w.locked_until > n.t)
    ORDER BY w.visible_at, w.id LIMIT $1
),
claims AS (
    SELECT l.lock_token AS token, l.instance_id,
           (SELECT max(extract(epoch FROM (l.locked_at - q.visible_at)) * 1000)::float8
            FROM __SCHEMA__.orchestrator_queue AS q
            WHERE q.instance_id = l.instance_id AND q.lock_token = l.lock_token
              AND q.attempt_count = 1) AS wait_ms
    FROM __SCHEMA__.instance_leases AS l
    WHERE l.lock_token IS NOT NULL AND l.locked_at >= to_timestamp($2::float8 / 1000)
)
SELECT n.ms AS now_ms,
       (SELECT COALESCE(json_agg(json_build_array(id::text, vis_ms) ORDER BY vis_ms, id), '[]') FROM ro) AS orch,
       (SELECT COALESCE(json_agg(json_build_array(id::text, vis_ms) ORDER BY vis_ms, id), '[]') FROM rw) AS worker,
       (SELECT COALESCE(json_agg(json_build_array(token, instance_id, wait_ms)), '[]') FROM claims) AS claims
FROM n
