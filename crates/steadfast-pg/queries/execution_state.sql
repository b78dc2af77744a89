-- The instance's current execution and the status of execution $2 (if it exists).
SELECT i.current_execution_id, e.status
FROM __SCHEMA__.instances AS i
LEFT JOIN __SCHEMA__.executions AS e ON e.instance_id = i.instance_id AND e.execution_id = $2
WHERE i.instance_id = $1
