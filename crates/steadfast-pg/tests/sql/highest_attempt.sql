-- The highest attempt count an instance's orchestrator messages ever reached, queued or
-- dead-lettered.
SELECT COALESCE(max(a), 0)::float8
FROM (
    SELECT attempt_count AS a FROM S.orchestrator_queue WHERE instance_id = $1
    UNION ALL
    SELECT attempt_count FROM S.dead_letters WHERE instance_id = $1
) AS counts
