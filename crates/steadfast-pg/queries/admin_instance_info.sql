-- Instance metadata with the status and output of its current execution.
-- Times are epoch milliseconds; updated_at is the latest change known to the instance
-- or its current execution.
SELECT i.instance_id,
       i.orchestration_name,
       COALESCE(i.orchestration_version, 'unknown') AS orchestration_version,
       i.current_execution_id,
       COALESCE(e.status, 'Unknown') AS status,
       e.output,
       (EXTRACT(EPOCH FROM i.created_at) * 1000)::int8 AS created_at_ms,
       (EXTRACT(EPOCH FROM GREATEST(i.updated_at, e.started_at, e.completed_at)) * 1000)::int8
           AS updated_at_ms,
       i.parent_instance_id
FROM __SCHEMA__.instances AS i
LEFT JOIN __SCHEMA__.executions AS e
       ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.instance_id = $1
