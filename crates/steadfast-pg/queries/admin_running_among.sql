-- One instance among $1 whose current execution is still Running, if any.
SELECT i.instance_id
FROM __SCHEMA__.instances AS i
JOIN __SCHEMA__.executions AS e
  ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.instance_id = ANY($1::text[]) AND e.status = 'Running'
ORDER BY i.instance_id
LIMIT 1
