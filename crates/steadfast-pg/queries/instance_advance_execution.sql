UPDATE __SCHEMA__.instances
SET current_execution_id = GREATEST(current_execution_id, $2), updated_at = clock_timestamp()
WHERE instance_id = $1
