SELECT execution_id
FROM __SCHEMA__.executions
WHERE instance_id = $1
ORDER BY execution_id
