-- One execution with its event count. Times are epoch milliseconds.
SELECT e.execution_id,
       e.status,
       e.output,
       (EXTRACT(EPOCH FROM e.started_at) * 1000)::int8 AS started_at_ms,
       (EXTRACT(EPOCH FROM e.completed_at) * 1000)::int8 AS completed_at_ms,
       (SELECT count(*)
        FROM __SCHEMA__.history AS h
        WHERE h.instance_id = e.instance_id AND h.execution_id = e.execution_id) AS event_count
FROM __SCHEMA__.executions AS e
WHERE e.instance_id = $1 AND e.execution_id = $2
