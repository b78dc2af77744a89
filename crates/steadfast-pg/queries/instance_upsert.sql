-- $1 instance, $2 name, $3 version, $4 execution, $5 parent (immutable once set).
INSERT INTO __SCHEMA__.instances
    (instance_id, orchestration_name, orchestration_version, current_execution_id, parent_instance_id)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (instance_id) DO UPDATE
SET orchestration_name = EXCLUDED.orchestration_name,
    orchestration_version = EXCLUDED.orchestration_version,
    updated_at = clock_timestamp()
