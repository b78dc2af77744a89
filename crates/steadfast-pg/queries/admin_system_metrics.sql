-- Instance counts by the status of each instance's current execution, plus totals.
SELECT count(*) AS total_instances,
       (SELECT count(*) FROM __SCHEMA__.executions) AS total_executions,
       count(*) FILTER (WHERE e.status = 'Running') AS running_instances,
       count(*) FILTER (WHERE e.status = 'Completed') AS completed_instances,
       count(*) FILTER (WHERE e.status = 'Failed') AS failed_instances,
       (SELECT count(*) FROM __SCHEMA__.history) AS total_events
FROM __SCHEMA__.instances AS i
LEFT JOIN __SCHEMA__.executions AS e
       ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
