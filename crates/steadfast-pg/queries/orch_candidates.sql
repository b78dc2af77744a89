-- Oldest ready orchestrator messages whose instance has no live lease (an expired lease
-- must also have served its redelivery backoff), limited to executions pinned inside the
-- supported duroxide version range when $4 is true. The caller keeps the first
-- `fanout` distinct instances and tries them in random order. A message whose lease row
-- is missing (enqueued while its instance was being deleted) is reported so the claim
-- can create the row.
-- $1 scan limit, $2 backoff base ms, $3 backoff cap ms, $4 filter on,
-- $5..$7 min (major, minor, patch), $8..$10 max (major, minor, patch).
SELECT q.instance_id, l.instance_id IS NULL AS lease_missing
FROM __SCHEMA__.orchestrator_queue AS q
LEFT JOIN __SCHEMA__.instance_leases AS l ON l.instance_id = q.instance_id
LEFT JOIN __SCHEMA__.instances AS i ON i.instance_id = q.instance_id
LEFT JOIN __SCHEMA__.executions AS e
       ON e.instance_id = q.instance_id AND e.execution_id = i.current_execution_id
WHERE q.visible_at <= clock_timestamp()
  AND (l.lock_token IS NULL -- also true when the lease row is missing
       OR l.locked_until
       + LEAST($3::float8, $2::float8 * power(2, LEAST(GREATEST(l.attempt_count, 1) - 1, 62)))
         * (1 + l.backoff_jitter) * interval '1 millisecond' <= clock_timestamp())
  AND (NOT $4
       OR e.pinned_major IS NULL
       OR (e.pinned_major, e.pinned_minor, e.pinned_patch)
          BETWEEN ($5::int, $6::int, $7::int) AND ($8::int, $9::int, $10::int))
ORDER BY q.visible_at, q.id
LIMIT $1
