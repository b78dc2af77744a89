SELECT COALESCE(max(execution_id), 1)
FROM __SCHEMA__.executions
WHERE instance_id = $1
