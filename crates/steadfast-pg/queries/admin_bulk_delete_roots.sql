-- Root instances eligible for bulk deletion: current execution Completed or Failed.
-- $1 allowlist (NULL = any), $2 completed before epoch ms (NULL = any time), $3 limit.
-- Oldest completion first, so repeated limited calls work through the backlog in order.
SELECT i.instance_id
FROM __SCHEMA__.instances AS i
JOIN __SCHEMA__.executions AS e
  ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.parent_instance_id IS NULL
  AND e.status IN ('Completed', 'Failed')
  AND ($1::text[] IS NULL OR i.instance_id = ANY($1::text[]))
  AND ($2::float8 IS NULL OR e.completed_at < to_timestamp($2::float8 / 1000.0))
ORDER BY e.completed_at, i.instance_id
LIMIT $3
