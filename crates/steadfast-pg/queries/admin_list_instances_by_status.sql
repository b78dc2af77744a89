-- Instances whose current execution has status $1, newest first.
SELECT i.instance_id
FROM __SCHEMA__.instances AS i
JOIN __SCHEMA__.executions AS e
  ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE e.status = $1
ORDER BY i.created_at DESC, i.instance_id
