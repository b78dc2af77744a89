INSERT INTO __SCHEMA__.executions (instance_id, execution_id)
VALUES ($1, $2)
ON CONFLICT (instance_id, execution_id) DO NOTHING
