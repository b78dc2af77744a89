SELECT orchestration_name, orchestration_version, current_execution_id
FROM __SCHEMA__.instances
WHERE instance_id = $1
