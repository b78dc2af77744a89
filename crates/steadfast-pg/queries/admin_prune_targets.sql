-- Instances for bulk pruning, whatever their status (pruning protects the current
-- execution). $1 allowlist (NULL = any), $2 current execution completed before epoch ms
-- (NULL = any time), $3 limit.
SELECT i.instance_id
FROM __SCHEMA__.instances AS i
LEFT JOIN __SCHEMA__.executions AS e
       ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE ($1::text[] IS NULL OR i.instance_id = ANY($1::text[]))
  AND ($2::float8 IS NULL OR e.completed_at < to_timestamp($2::float8 / 1000.0))
ORDER BY i.created_at, i.instance_id
LIMIT $3
